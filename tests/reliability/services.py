"""Real services the fault tests start, break and restart: ``chroma run``, a PRIVATE
PostgreSQL cluster, and ``citewall serve`` subprocesses. All on 127.0.0.1, on free ports.

The machine's shared PostgreSQL (port 5432) is never touched: ``PrivatePostgres`` runs its own
cluster (``initdb`` into a temp dir, as the ``postgres`` user when we are root, because initdb
refuses root) and only ever stops and starts that one.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx

from citewall_evals.bench.server import free_port, read_rss_kb

VENV_BIN = Path(sys.executable).parent


def wait_until(ready: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll ``ready`` until it is true; raise ``TimeoutError`` naming ``what``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if ready():
                return
        time.sleep(0.1)
    raise TimeoutError(f"{what} not ready after {timeout_s:.0f} s")


def http_ok(url: str) -> bool:
    return httpx.get(url, timeout=1.0).status_code == 200


class ChromaServer:
    """``chroma run`` on a fixed port and path, so it can be killed and started again."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> ChromaServer:
        exe = shutil.which("chroma", path=str(VENV_BIN)) or "chroma"
        self.proc = subprocess.Popen(
            [exe, "run", "--host", "127.0.0.1", "--port", str(self.port), "--path", str(self.path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        )
        wait_until(lambda: http_ok(f"{self.url}/api/v2/heartbeat"), 30, "chroma run")
        return self

    def kill(self) -> None:
        """SIGKILL: the server dies mid-run, as in a crash."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


def _pg_bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        raise FileNotFoundError(f"no PostgreSQL {name} under /usr/lib/postgresql/*/bin")
    return found[-1]


class PrivatePostgres:
    """A throw-away PostgreSQL cluster in a temp dir, on its own port (trust auth, loopback)."""

    def __init__(self) -> None:
        # Not under pytest's tmp dir: that is mode 0700 for root, and the server runs as postgres.
        self.dir = Path(tempfile.mkdtemp(prefix="citewall-pg-"))
        self.data = self.dir / "data"
        self.port = free_port()
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"
        self._as_postgres = os.geteuid() == 0

    def _run(self, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if self._as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)

    def init(self) -> PrivatePostgres:
        if self._as_postgres:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run(
            [_pg_bin("initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync"]
        )
        return self

    def start(self) -> None:
        opts = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(
            [
                _pg_bin("pg_ctl"),
                "-D",
                str(self.data),
                "-o",
                opts,
                "-l",
                str(self.dir / "log"),
                "-w",
                "-t",
                "60",
                "start",
            ]
        )

    def stop(self, mode: str = "fast") -> None:
        """Stop the cluster; ``fast`` disconnects every client and rolls back open work."""
        self._run([_pg_bin("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop"])

    def destroy(self) -> None:
        with contextlib.suppress(Exception):
            self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)


class ServeProcess:
    """``citewall serve`` as a subprocess on a free loopback port, with its own environment.

    ``prefix`` wraps the command (e.g. ``unshare -m sh -c ...``), ``args`` are added to
    ``serve``'s (e.g. ``--workers 2``); the process gets its own
    process group so a kill reaches the server and not the test runner.
    """

    def __init__(
        self,
        env: dict[str, str],
        *,
        log_path: Path,
        prefix: Sequence[str] = (),
        args: Sequence[str] = (),
    ):
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, **env, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        self.log_path = log_path
        self.prefix = list(prefix)
        self.args = list(args)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def command(self) -> list[str]:
        exe = str(VENV_BIN / "citewall")
        serve = ["serve", "--host", "127.0.0.1", "--port", str(self.port), *self.args]
        return [*self.prefix, exe, *serve]

    def start(self, timeout_s: float = 120) -> ServeProcess:
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                self.command,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
                cwd=self.log_path.parent,  # no stray .env file
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return self  # exited: the caller reads ``returncode`` and ``log``
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base_url}/healthz", timeout=1.0).status_code == 200:
                    return self
            time.sleep(0.2)
        self.kill()
        raise TimeoutError(f"citewall serve not up after {timeout_s:.0f} s:\n{self.log}")

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def rss_kb(self) -> int:
        rss = read_rss_kb(self.pid)
        assert rss is not None, f"serve process {self.pid} is gone"
        return rss

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Signal the server's process group (``kill -9`` by default) and reap it."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        self.kill(signal.SIGTERM)
