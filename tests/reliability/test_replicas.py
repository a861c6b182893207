"""Two replicas on shared services only: PostgreSQL, a ``chroma run`` server and Redis.

Two ``citewall serve`` processes start with separate, empty data dirs (nothing shared on disk)
on one PostgreSQL database, one Chroma server and one Redis. A third process (``citewall
ingest`` from a data dir of its own) adds a card: both replicas serve it, on the hybrid path,
within 5 s. 30 searches from one member spread over both replicas at 20 a minute get exactly
10 refusals. ``kill -9`` of one replica while members chat on both loses no acknowledged turn,
and the other keeps answering. README "Running several replicas" shows these same commands.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from pgdb import temporary_database
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session
from testenv import PG_ADMIN_URL, REDIS_URL

from citewall.storage import db, users
from citewall.storage.models import Message

from .rig import QUESTIONS, ingest_small_kb, make_settings, turn_integrity_problems
from .services import VENV_BIN, ChromaServer, ServeProcess, wait_until

pytestmark = pytest.mark.slow
#: Members chatting while one replica is killed, and the turns each asks at most (each stays
#: under the rate limit of 20 a minute).
CHAT_CLIENTS = 4
CHAT_TURNS = 12
#: Seconds within which both replicas must serve a card another process ingested.
PICKUP_S = 5.0

#: The card the third process adds while both replicas serve.
NEW_CARD = {
    "id": "help-customs-forms-overseas",
    "title": "Customs forms for overseas parcels",
    "body": "A parcel to another country needs a customs declaration. Parcelry fills in the "
    "CN22 form for parcels under 2 kg and the CN23 form above that, from the product's HS code "
    "and declared value. Print the form with the label and attach it to the outside of the box.",
    "url": "https://help.parcelry.example/labels/customs-forms",
    "license": "CC-BY-4.0",
}
NEW_CARD_QUESTION = "Which customs form does an overseas parcel need, CN22 or CN23?"


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


def replica_env(database_url: str, chroma_url: str, prefix: str) -> dict[str, str]:
    """What every replica (and the ingesting process) is given: shared services only."""
    return {
        "CITEWALL_DATABASE_URL": database_url,
        "CITEWALL_CHROMA_URL": chroma_url,
        "CITEWALL_REDIS_URL": REDIS_URL,
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


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Replicas]:
    """Both replicas, started once for this module (the kill test runs last)."""
    tmp_path = tmp_path_factory.mktemp("replicas")
    prefix = f"citewall-test-{uuid.uuid4().hex[:8]}:"
    chroma = ChromaServer(tmp_path / "chroma").start()
    servers: list[ServeProcess] = []
    try:
        with temporary_database(PG_ADMIN_URL) as database_url:
            # The KB's first cards, ingested from a data dir no replica ever sees.
            seed = make_settings(
                tmp_path / "seed", database_url=database_url, chroma_url=chroma.url
            )
            ingest_small_kb(seed, embedder)
            env = replica_env(database_url, chroma.url, prefix)
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
            roles = {"operator": "admin", "watcher": "member", "limited": "member"}
            roles |= {f"chat-{i}": "member" for i in range(CHAT_CLIENTS)}
            tokens = create_users(database_url, roles)
            yield Replicas(database_url, chroma.url, env, servers, tokens)
            for server in servers:
                server.kill()
    finally:
        for server in servers:
            server.kill()
        chroma.stop()
        client = redis.Redis.from_url(REDIS_URL)
        for key in client.scan_iter(match=prefix + "*"):
            client.delete(key)


def ingest_new_card(replicas: Replicas, tmp_path: Path) -> None:
    """``citewall ingest`` in a third process with a data dir of its own."""
    kb = tmp_path / "new-card.jsonl"
    kb.write_text(json.dumps(NEW_CARD) + "\n", encoding="utf-8")
    data_dir = tmp_path / "ingester"
    data_dir.mkdir()
    done = subprocess.run(
        [str(VENV_BIN / "citewall"), "ingest", str(kb)],
        env={**os.environ, **replicas.env, "CITEWALL_DATA_DIR": str(data_dir)},
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "added 1," in done.stdout + done.stderr, done.stdout + done.stderr


def test_both_replicas_serve_a_card_another_process_ingests_within_5_s(
    replicas: Replicas, tmp_path: Path
) -> None:
    first, second = replicas.servers
    # Empty data dirs: each replica copied the lexical index from the database.
    versions = {replicas.lexical_version(server) for server in replicas.servers}
    assert len(versions) == 1 and None not in versions, versions
    for server in replicas.servers:
        assert replicas.ready(server)["checks"]["retrieval"]["shared_kb"] is True
        r = replicas.search(server, "watcher", QUESTIONS[0])
        assert r.status_code == 200 and r.json()["hybrid_path"] == "rrf_only", r.text

    ingest_new_card(replicas, tmp_path)
    ingested_at = time.monotonic()
    waiting = list(replicas.servers)
    while waiting and time.monotonic() - ingested_at < PICKUP_S:
        for server in list(waiting):
            if replicas.lexical_version(server) not in versions:  # a new version is live
                waiting.remove(server)
        time.sleep(0.1)
    assert not waiting, f"{len(waiting)} replica(s) still on the old index after {PICKUP_S} s"
    for server in (first, second):
        r = replicas.search(server, "watcher", NEW_CARD_QUESTION)
        assert r.status_code == 200, r.text
        assert r.json()["hybrid_path"] == "rrf_only", r.text
        assert r.json()["results"][0]["card_id"] == NEW_CARD["id"], r.text
    took = time.monotonic() - ingested_at
    assert took < PICKUP_S, f"both replicas served the new card after {took:.1f} s"
    assert replicas.lexical_version(first) == replicas.lexical_version(second)


def test_one_member_spread_over_both_replicas_gets_exactly_10_of_30_refused(
    replicas: Replicas,
) -> None:
    statuses = [
        replicas.search(replicas.servers[n % 2], "limited", QUESTIONS[n % len(QUESTIONS)])
        for n in range(30)
    ]
    codes = [r.status_code for r in statuses]
    assert codes.count(200) == 20 and codes.count(429) == 10, codes
    by_replica = [codes[n::2] for n in (0, 1)]
    assert all(200 in c and 429 in c for c in by_replica), by_replica  # the window is shared


class ChatLoad:
    """``CHAT_CLIENTS`` members chatting on both replicas in turn; what each was told."""

    def __init__(self, replicas: Replicas) -> None:
        self.replicas = replicas
        self.acknowledged: dict[int, list[str]] = {0: [], 1: []}
        self.answered_after_kill = 0
        self.refused: list[tuple[int, str]] = []
        self.killed = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, args=(i,)) for i in range(CHAT_CLIENTS)]

    def _run(self, i: int) -> None:
        headers = self.replicas.headers(f"chat-{i}")
        for n in range(CHAT_TURNS):
            replica = (i + n) % 2
            if replica == 0 and self.killed.is_set():
                replica = 1  # the load balancer takes the dead replica out
            server = self.replicas.servers[replica]
            question = QUESTIONS[(i + n) % len(QUESTIONS)]
            after_kill = self.killed.is_set()
            try:
                r = httpx.post(
                    f"{server.base_url}/api/v1/chat",
                    json={"message": question},
                    headers=headers,
                    timeout=60,
                )
            except httpx.HTTPError:
                continue  # in flight on the replica that was killed: never acknowledged
            with self._lock:
                if r.status_code != 200:
                    self.refused.append((r.status_code, r.text[:200]))
                    continue
                self.acknowledged[replica].append(str(r.json()["message_id"]))
                self.answered_after_kill += int(after_kill and replica == 1)

    def __enter__(self) -> ChatLoad:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for t in self._threads:
            t.join(timeout=300)

    def total(self) -> int:
        with self._lock:
            return sum(len(ids) for ids in self.acknowledged.values())


def test_kill_9_of_one_replica_loses_no_acknowledged_turn(replicas: Replicas) -> None:
    victim, survivor = replicas.servers
    with ChatLoad(replicas) as load:
        wait_until(lambda: load.total() >= 8, 240, "8 acknowledged turns")
        victim.kill()  # SIGKILL, mid-turn for someone
        load.killed.set()
    assert load.refused == [], load.refused[:3]
    assert load.acknowledged[0], "the killed replica acknowledged no turn before the kill"
    assert load.answered_after_kill >= 1, "the surviving replica answered nothing after the kill"
    assert survivor.returncode is None, survivor.log

    engine = create_engine(replicas.database_url)
    try:
        assert turn_integrity_problems(engine) == []
        with Session(engine) as session:
            stored = set(session.scalars(select(Message.id).where(Message.role == "assistant")))
        acknowledged = {m for ids in load.acknowledged.values() for m in ids}
        assert acknowledged <= stored, f"{len(acknowledged - stored)} acknowledged turns lost"
    finally:
        engine.dispose()
    r = replicas.search(survivor, "watcher", QUESTIONS[1])
    assert r.status_code == 200 and r.json()["hybrid_path"] == "rrf_only", r.text
