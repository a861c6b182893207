"""A real ``citewall serve`` on loopback for load benchmarks: data dir, KB, member, process.

Only 127.0.0.1 is ever used. The server runs as a subprocess of this Python (same venv), on a
free port, with a throwaway data dir: SQLite, embedded Chroma, the demo KB ingested through the
CLI, the rate limit off, no model hub. The requests a benchmark times against it
(``ask_ms``, ``stream_ms``) live here too, and the CPU that client and server each used
(``own_cpu_s``, ``process_cpu_s``): they share the machine's cores.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import httpx

#: Seconds a server may take to become ready (models load, the index opens).
READY_TIMEOUT_S = 180.0
#: The endpoints a question is posted to, and the body field that carries it.
Endpoint = Literal["chat", "search"]
QUESTION_FIELD: dict[Endpoint, str] = {"chat": "message", "search": "query"}
#: Clock ticks per second: the unit of the CPU times in /proc/<pid>/stat.
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def bench_env(data_dir: Path, **settings: str) -> dict[str, str]:
    """This process's environment plus a throwaway citewall: ``data_dir``, SQLite, embedded
    Chroma, no rate limit, offline; ``settings`` adds ``CITEWALL_*`` values
    (``reranker_enabled="false"`` -> ``CITEWALL_RERANKER_ENABLED=false``)."""
    return {
        **os.environ,
        "CITEWALL_DATA_DIR": str(data_dir),
        "CITEWALL_DATABASE_URL": "",
        "CITEWALL_CHROMA_URL": "",
        "CITEWALL_RATE_LIMIT_PER_MINUTE": "0",
        "CITEWALL_LOG_LEVEL": "warning",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
        **{f"CITEWALL_{k.upper()}": v for k, v in settings.items()},
    }


def citewall_cli(args: list[str], env: dict[str, str], timeout_s: float = 1800) -> str:
    """Run ``citewall ARGS`` (this venv) and return its stdout; ``RuntimeError`` on failure."""
    done = subprocess.run(
        [sys.executable, "-m", "citewall.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout_s,
    )
    if done.returncode != 0:
        raise RuntimeError(f"citewall {' '.join(args)} failed: {done.stderr.strip()[-2000:]}")
    return done.stdout


def add_user(env: dict[str, str], name: str, role: str = "member") -> str:
    """Add the user ``name`` in ``env``'s data dir; their token (the last line printed)."""
    out = citewall_cli(["users", "add", name, "--role", role], env)
    return out.strip().splitlines()[-1].strip()


def prepare(env: dict[str, str], kb: Path, member: str) -> str:
    """Ingest ``kb`` and add the member ``member`` in ``env``'s data dir; their token."""
    citewall_cli(["ingest", str(kb), "--no-progress"], env)
    return add_user(env, member)


def own_cpu_s() -> float:
    """User + system CPU seconds this process (every thread) has used so far."""
    times = os.times()
    return times.user + times.system


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds process ``pid`` (every thread) has used so far, from
    /proc/<pid>/stat; None where there is no /proc (not Linux) or the process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return None
    # Fields after the parenthesised command name (which may hold spaces): state is the first,
    # utime and stime the 12th and 13th (proc(5) fields 14 and 15).
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def child_pids(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc; empty where there is none)."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            # The command name (field 2) is in parentheses and may hold spaces.
            fields = stat.read_text(encoding="ascii").rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                children.append(int(stat.parent.name))
    return sorted(children)


def worker_pids(pid: int) -> list[int]:
    """The worker processes of ``citewall serve --workers N`` running as ``pid``: its children
    started by multiprocessing's spawn (not its resource tracker). Empty for one worker, which
    is ``pid`` itself."""
    workers = []
    for child in child_pids(pid):
        with contextlib.suppress(OSError):
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                workers.append(child)
    return workers


def read_rss_kb(pid: int, field: str = "VmRSS") -> int | None:
    """Resident set size of ``pid`` in kB (``field`` of /proc/<pid>/status: VmRSS now, VmHWM
    its peak, RssAnon its private part); None when the process is gone or there is no /proc."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    return None


@dataclass(frozen=True, slots=True)
class Served:
    """A running server: its base URL and process (for CPU and RSS readings)."""

    base_url: str
    process: subprocess.Popen[bytes]


@contextlib.contextmanager
def serving(
    env: dict[str, str], log: Path | None = None, args: Sequence[str] = ()
) -> Iterator[Served]:
    """``citewall serve`` on a free loopback port until the block ends; ready when /readyz
    answers 200. ``args`` are added to ``serve``'s (e.g. ``--workers 2``; then /readyz answers
    once any one worker is ready). ``RuntimeError`` if it exits or is not ready in time."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(log.open("wb")) if log else subprocess.DEVNULL
        command = [sys.executable, "-m", "citewall.cli.main", "serve"]
        proc = subprocess.Popen(
            [*command, "--host", "127.0.0.1", "--port", str(port), *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_ready(f"{base_url}/readyz", proc)
            yield Served(base_url, proc)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout_s: float = READY_TIMEOUT_S) -> None:
    """Poll ``url`` until it answers 200; ``RuntimeError`` when the server process ``proc``
    exits first or time runs out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited early (code {proc.returncode})")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code == 200:
                return
        time.sleep(0.3)
    raise RuntimeError(f"the server was not ready within {timeout_s:.0f} s")


class RequestFailed(RuntimeError):
    """A request that did not give a whole answer (its kind is the message): counted as an
    error when timed, fatal while warming up (the server is broken)."""


def ask_ms(
    client: httpx.Client, served: Served, token: str, endpoint: Endpoint, question: str
) -> float:
    """Milliseconds of one ``POST /api/v1/<endpoint>`` of ``question``; ``RequestFailed`` on a
    non-200."""
    body = {QUESTION_FIELD[endpoint]: question}
    t0 = time.perf_counter()
    r = client.post(
        f"{served.base_url}/api/v1/{endpoint}",
        json=body,
        headers={"Authorization": f"Bearer {token}"},
    )
    elapsed = (time.perf_counter() - t0) * 1000.0
    if r.status_code != 200:
        raise RequestFailed(f"HTTP {r.status_code}")
    return elapsed


def stream_ms(
    client: httpx.Client, served: Served, token: str, question: str
) -> tuple[float, float]:
    """(ms to the first answer text, ms to the ``final`` event) of one ``POST
    /api/v1/chat/stream``. The first answer text is the first ``token`` event with a non-empty
    delta (the ``final`` event, for an answer with no text). ``RequestFailed`` on a non-200,
    an ``error`` event or a stream that ends without ``final``."""
    t0 = time.perf_counter()
    first: float | None = None
    event = ""
    with client.stream(
        "POST",
        f"{served.base_url}/api/v1/chat/stream",
        json={"message": question},
        headers={"Authorization": f"Bearer {token}"},
    ) as r:
        if r.status_code != 200:
            raise RequestFailed(f"HTTP {r.status_code}")
        for line in r.iter_lines():
            if line.startswith("event:"):
                event = line[6:].strip()
                if event == "error":
                    raise RequestFailed("error event")
            elif line.startswith("data:") and event == "token" and first is None:
                if json.loads(line[5:]).get("delta"):
                    first = (time.perf_counter() - t0) * 1000.0
            elif line.startswith("data:") and event == "final":
                done = (time.perf_counter() - t0) * 1000.0
                return (done if first is None else first), done
    raise RequestFailed("the stream ended without a final event")


def warm_up(served: Served, token: str, questions: list[str]) -> None:
    """Ask each of ``questions`` as a turn, a search and a stream: models and indexes warm,
    first-call costs paid. These questions are timed nowhere."""
    with httpx.Client(timeout=120) as client:
        for question in questions:
            ask_ms(client, served, token, "chat", question)
            ask_ms(client, served, token, "search", question)
            stream_ms(client, served, token, question)
