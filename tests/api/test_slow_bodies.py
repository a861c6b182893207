"""Slow clients against a real ``citewall serve``: raw sockets on 127.0.0.1.

uvicorn waits for a declared body for as long as the client keeps the connection open, and
its keep-alive timeout only starts after a response. A client that declares
``Content-Length: 1000`` and sends 10 bytes (or trickles a byte now and then) must be answered
408 and cut off within ``CITEWALL_BODY_READ_TIMEOUT_S``, while everyone else is served; an
idle kept-alive connection is closed after ``CITEWALL_KEEP_ALIVE_TIMEOUT_S``; a response
given before the body arrived (a 413 on the declared length) closes the connection at once.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from citewall_evals.bench.server import Served, add_user, bench_env, citewall_cli, serving

from .conftest import EXTERNAL_QUESTION, KB_FILE

BODY_TIMEOUT_S = 2.0
KEEP_ALIVE_S = 2
#: Slack for a loaded 2-core machine on top of a timeout.
SLACK_S = 3.0


@dataclass(frozen=True)
class SlowEnv:
    served: Served
    token: str

    @property
    def port(self) -> int:
        return int(self.served.base_url.rsplit(":", 1)[1])


@pytest.fixture(scope="module")
def slow_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlowEnv]:
    data_dir = tmp_path_factory.mktemp("slow-bodies")
    env = bench_env(
        data_dir,
        reranker_enabled="false",
        body_read_timeout_s=str(BODY_TIMEOUT_S),
        keep_alive_timeout_s=str(KEEP_ALIVE_S),
    )
    citewall_cli(["ingest", str(KB_FILE), "--no-progress"], env)
    token = add_user(env, "member")
    log = Path(data_dir) / "serve.log"
    try:
        with serving(env, log) as served:
            yield SlowEnv(served, token)
    except Exception:
        print(log.read_text(errors="replace")[-4000:])
        raise


def open_request(env: SlowEnv, declared: int, sent: bytes) -> socket.socket:
    """A connection that sent a POST's headers declaring ``declared`` body bytes, then ``sent``."""
    sock = socket.create_connection(("127.0.0.1", env.port), timeout=BODY_TIMEOUT_S + SLACK_S)
    head = (
        f"POST /api/v1/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {env.token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {declared}\r\n\r\n"
    )
    sock.sendall(head.encode("ascii") + sent)
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (or the socket times out)."""
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except TimeoutError:
        chunks.append(b"<still open>")
    return b"".join(chunks)


def status_and_body(raw: bytes) -> tuple[int, bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def test_a_body_that_never_arrives_is_a_408_and_others_are_served(slow_env: SlowEnv) -> None:
    started = time.monotonic()
    stuck = [open_request(slow_env, 1000, b'{"message"') for _ in range(50)]

    def answer(sock: socket.socket) -> tuple[bytes, float]:
        with sock:
            raw = read_until_closed(sock)
        return raw, time.monotonic() - started

    with ThreadPoolExecutor(len(stuck)) as pool:
        answers = pool.map(answer, stuck)
        # Meanwhile the server answers others, chat included (a worker thread each).
        with httpx.Client(base_url=slow_env.served.base_url, timeout=30) as client:
            assert client.get("/healthz").status_code == 200
            r = client.post(
                "/api/v1/chat",
                json={"message": EXTERNAL_QUESTION},
                headers={"Authorization": f"Bearer {slow_env.token}"},
            )
            assert r.status_code == 200, r.text
        for raw, elapsed in answers:
            assert not raw.endswith(b"<still open>"), raw[-300:]
            status, body = status_and_body(raw)
            assert status == 408, raw[:300]
            assert b"connection: close" in raw.lower()
            assert "CITEWALL_BODY_READ_TIMEOUT_S" in json.loads(body)["detail"]
            assert BODY_TIMEOUT_S - 0.2 <= elapsed <= BODY_TIMEOUT_S + SLACK_S, elapsed


def test_a_body_trickled_byte_by_byte_is_cut_off_at_the_deadline(slow_env: SlowEnv) -> None:
    started = time.monotonic()
    sock = open_request(slow_env, 1000, b"{")
    with sock:
        try:
            while time.monotonic() - started < BODY_TIMEOUT_S + SLACK_S:
                time.sleep(0.3)  # well inside any per-read timeout
                sock.sendall(b" ")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server cut it off
        raw = read_until_closed(sock)
    elapsed = time.monotonic() - started
    assert status_and_body(raw)[0] == 408, raw[:300]
    assert elapsed <= BODY_TIMEOUT_S + SLACK_S + 0.5, elapsed


def test_a_response_before_the_body_closes_the_connection(slow_env: SlowEnv) -> None:
    # Declared over the body limit: 413 at once, then the connection is closed, not left open
    # for the client to keep sending into.
    started = time.monotonic()
    with open_request(slow_env, 10_000_000, b"") as sock:
        raw = read_until_closed(sock)
    assert status_and_body(raw)[0] == 413, raw[:300]
    assert b"connection: close" in raw.lower()
    assert time.monotonic() - started < 1.5


def test_an_idle_kept_alive_connection_is_closed_after_the_keep_alive_timeout(
    slow_env: SlowEnv,
) -> None:
    sock = socket.create_connection(("127.0.0.1", slow_env.port), timeout=KEEP_ALIVE_S + SLACK_S)
    with sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200"), first[:200]
        idle_from = time.monotonic()
        rest = read_until_closed(sock)
    idle = time.monotonic() - idle_from
    assert not rest.endswith(b"<still open>")
    assert KEEP_ALIVE_S - 0.2 <= idle <= KEEP_ALIVE_S + 1.0, idle  # uvicorn's own default is 5
