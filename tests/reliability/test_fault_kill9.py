"""Fault: ``kill -9`` of a ``citewall serve`` process while it answers and writes chat turns.

Eight clients keep it busy (new conversations, follow-ups and streams; every turn ends in a
write), then the server gets SIGKILL. Afterwards the database must hold only whole turns (a
user message, its assistant message, the retrieval events) and every turn a client was told
about; a restart on the same data dir serves again.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from citewall.storage.models import Message

from .rig import QUESTIONS, prepare_served_dir, served_env, turn_integrity_problems
from .services import ServeProcess, wait_until
from .sse import sse_events

pytestmark = pytest.mark.slow
CLIENTS = 8


class Clients:
    """``CLIENTS`` threads posting turns until the server dies; records what was acknowledged."""

    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url
        self.headers = {"Authorization": f"Bearer {token}"}
        self.acknowledged: list[str] = []
        self.in_flight_errors = 0
        self.bad_statuses: list[tuple[int, str]] = []
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, args=(i,)) for i in range(CLIENTS)]

    def _turn(
        self, http: httpx.Client, i: int, n: int, conversation: str | None
    ) -> tuple[str, str] | None:
        body = {"message": QUESTIONS[(i + n) % len(QUESTIONS)], "conversation_id": conversation}
        if i % 3 == 2:  # some clients stream
            r = http.post("/api/v1/chat/stream", json=body, headers=self.headers)
            events = sse_events(r.text)
            if r.status_code != 200 or events[-1][0] != "final":
                with self._lock:
                    self.bad_statuses.append((r.status_code, r.text[:200]))
                return None
            final = events[-1][1]
            return str(final["message_id"]), str(final["conversation_id"])
        r = http.post("/api/v1/chat", json=body, headers=self.headers)
        if r.status_code != 200:
            with self._lock:
                self.bad_statuses.append((r.status_code, r.text[:200]))
            return None
        return str(r.json()["message_id"]), str(r.json()["conversation_id"])

    def _run(self, i: int) -> None:
        conversation: str | None = None
        with httpx.Client(base_url=self.base_url, timeout=60) as http:
            for n in range(1000):
                try:
                    done = self._turn(http, i, n, conversation)
                except httpx.HTTPError:
                    with self._lock:
                        self.in_flight_errors += 1
                    return  # the server is gone
                if done:
                    message_id, conv = done
                    with self._lock:
                        self.acknowledged.append(message_id)
                    conversation = conv if n % 4 else None  # follow-ups, then a new one

    def __enter__(self) -> Clients:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for t in self._threads:
            t.join(timeout=120)


@pytest.fixture
def served(rig_dir: Path, embedder: Any) -> Iterator[tuple[Path, dict[str, str]]]:
    yield rig_dir, prepare_served_dir(rig_dir, embedder)


def test_kill_9_during_chat_writes_leaves_only_whole_turns(
    served: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    data_dir, tokens = served
    server = ServeProcess(served_env(data_dir), log_path=tmp_path / "serve.log").start()
    assert server.returncode is None, server.log
    try:
        with Clients(server.base_url, tokens["member"]) as clients:
            wait_until(lambda: len(clients.acknowledged) >= 12, 180, "12 acknowledged turns")
            server.kill()  # SIGKILL: no shutdown hooks, no rollback, mid-write for someone
    finally:
        server.kill()
    assert clients.bad_statuses == [], clients.bad_statuses[:3]
    assert clients.in_flight_errors >= 1, "the kill did not interrupt any request"

    engine = create_engine(f"sqlite:///{data_dir / 'citewall.db'}")
    try:
        assert turn_integrity_problems(engine) == []
        with Session(engine) as session:
            stored = set(session.scalars(select(Message.id).where(Message.role == "assistant")))
        lost = set(clients.acknowledged) - stored
        assert not lost, f"{len(lost)} acknowledged turns are not in the database"
    finally:
        engine.dispose()

    # The same data dir serves again after the crash.
    again = ServeProcess(served_env(data_dir), log_path=tmp_path / "serve2.log").start()
    try:
        assert again.returncode is None, again.log
        assert httpx.get(f"{again.base_url}/readyz", timeout=10).status_code == 200
        r = httpx.post(
            f"{again.base_url}/api/v1/chat",
            json={"message": QUESTIONS[0]},
            headers={"Authorization": f"Bearer {tokens['member']}"},
            timeout=60,
        )
        assert r.status_code == 200, r.text
    finally:
        again.stop()
    engine = create_engine(f"sqlite:///{data_dir / 'citewall.db'}")
    try:
        assert turn_integrity_problems(engine) == []
    finally:
        engine.dispose()
