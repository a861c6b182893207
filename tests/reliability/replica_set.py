"""Two ``citewall serve`` replicas on shared services only: PostgreSQL, a ``chroma run`` server
and Redis, each replica on an empty data dir of its own, all on 127.0.0.1.

``running_replicas`` is what ``test_replicas.py``'s module fixture and
``benchmarks/replica_refresh.py`` start; ``first_seen`` times how long each replica takes to
serve a change (a bounded polling loop).
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import redis
from pgdb import temporary_database

from citewall.storage import db, users

from .rig import ingest_small_kb, make_settings
from .services import ChromaServer, ServeProcess


@dataclass
class Replicas:
    """The shared services, the two replicas and what a test needs to talk to them."""

    database_url: str
    chroma_url: str
    env: dict[str, str]
    servers: list[ServeProcess]
    tokens: dict[str, str] = field(default_factory=dict)

    def headers(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def search(self, server: ServeProcess, who: str, query: str) -> httpx.Response:
        return httpx.post(
            f"{server.base_url}/api/v1/search",
            json={"query": query},
            headers=self.headers(who),
            timeout=60,
        )

    def ready(self, server: ServeProcess) -> dict[str, Any]:
        """The replica's /readyz as the operator sees it (with its checks)."""
        r = httpx.get(f"{server.base_url}/readyz", headers=self.headers("operator"), timeout=10)
        body: dict[str, Any] = r.json()
        return body

    def lexical_version(self, server: ServeProcess) -> str | None:
        index = self.ready(server)["checks"]["retrieval"]["lexical_index"]
        return str(index["version"]) if index["ok"] else None

    def add_users(self, role: str, prefix: str, n: int) -> Iterator[str]:
        """``n`` new users of ``role`` named ``prefix-<i>``; an endless round of their names,
        so a polling loop spreads its requests over them (the rate limit is per member)."""
        names = [f"{prefix}-{i}" for i in range(n)]
        self.tokens |= create_users(self.database_url, dict.fromkeys(names, role))
        return itertools.cycle(names)


def replica_env(database_url: str, chroma_url: str, redis_url: str, prefix: str) -> dict[str, str]:
    """What every replica (and an ingesting process) is given: shared services only."""
    return {
        "CITEWALL_DATABASE_URL": database_url,
        "CITEWALL_CHROMA_URL": chroma_url,
        "CITEWALL_REDIS_URL": redis_url,
        "CITEWALL_REDIS_KEY_PREFIX": prefix,
        "CITEWALL_RATE_LIMIT_PER_MINUTE": "20",
        "CITEWALL_RERANKER_ENABLED": "false",
        "CITEWALL_GENERATOR": "extractive",
        "CITEWALL_LOG_LEVEL": "warning",
    }


def create_users(database_url: str, roles: dict[str, str]) -> dict[str, str]:
    """Users named after ``roles``' keys with those roles; their bearer tokens."""
    engine = db.make_engine(database_url)
    try:
        with db.make_session_factory(engine)() as session:
            return {
                who: users.create_user(session, f"{who}-{uuid.uuid4().hex[:6]}", role)[1]
                for who, role in roles.items()
            }
    finally:
        engine.dispose()


@contextmanager
def running_replicas(
    tmp_path: Path,
    embedder: Any,
    *,
    pg_admin_url: str,
    redis_url: str,
    roles: dict[str, str],
    settings: Mapping[str, str] | None = None,
) -> Iterator[Replicas]:
    """A temporary database on ``pg_admin_url``'s server with the small KB ingested (from a
    data dir no replica sees), a Chroma server, and both replicas up, with ``settings`` (
    ``CITEWALL_*`` variables) over ``replica_env``'s; users of ``roles`` (``operator`` is always
    an admin). Everything is stopped and dropped afterwards."""
    prefix = f"citewall-test-{uuid.uuid4().hex[:8]}:"
    chroma = ChromaServer(tmp_path / "chroma").start()
    servers: list[ServeProcess] = []
    try:
        with temporary_database(pg_admin_url) as database_url:
            seed = make_settings(
                tmp_path / "seed", database_url=database_url, chroma_url=chroma.url
            )
            ingest_small_kb(seed, embedder)
            env = replica_env(database_url, chroma.url, redis_url, prefix) | dict(settings or {})
            for n in (1, 2):
                data_dir = tmp_path / f"replica-{n}"
                data_dir.mkdir()
                server = ServeProcess(
                    {**env, "CITEWALL_DATA_DIR": str(data_dir)},
                    log_path=data_dir.parent / f"replica-{n}.log",
                )
                servers.append(server)
                server.start(timeout_s=240)
                assert server.returncode is None, server.log
            tokens = create_users(database_url, {"operator": "admin", **roles})
            yield Replicas(database_url, chroma.url, env, servers, tokens)
            for server in servers:
                server.kill()
    finally:
        for server in servers:
            server.kill()
        chroma.stop()
        client = redis.Redis.from_url(redis_url)
        for key in client.scan_iter(match=prefix + "*"):
            client.delete(key)


def first_seen(
    servers: Sequence[ServeProcess],
    serves: Callable[[ServeProcess], bool],
    *,
    since: float,
    limit_s: float,
    every_s: float = 0.05,
) -> list[float | None]:
    """Seconds from ``since`` (a ``time.monotonic()``) until ``serves(server)`` first held, per
    server; None for one that did not within ``limit_s``."""
    seen: list[float | None] = [None] * len(servers)
    while None in seen and time.monotonic() - since < limit_s:
        for i, server in enumerate(servers):
            if seen[i] is None and serves(server):
                seen[i] = time.monotonic() - since
        time.sleep(every_s)
    return seen
