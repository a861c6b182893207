"""Two replicas on shared services only: PostgreSQL, a ``chroma run`` server and Redis.

Two ``citewall serve`` processes start with separate, empty data dirs (nothing shared on disk)
on one PostgreSQL database, one Chroma server and one Redis. A third process (``citewall
ingest`` from a data dir of its own) adds a card: both replicas serve it, on the hybrid path,
within 5 s. 30 searches from one member spread over both replicas at 20 a minute get exactly
10 refusals. A card an admin disables through one replica's API is served by neither replica
within 5 s (search and chat), enabling it brings it back on both within 5 s, and a playbook
saved through one replica is served with its new text by the other within 5 s. A card file
registered as a source on a schedule, due while both replicas keep their sync schedule
(``CITEWALL_SYNC_POLL_S`` 1), is synced by exactly one of them (one ``ingest_runs`` row) and
served by both within 5 s of its registration. ``kill -9`` of one replica while members chat
on both loses no acknowledged turn, and the other keeps answering (it runs last). README
"Running several replicas" shows these same commands.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session
from testenv import PG_ADMIN_URL, REDIS_URL

from citewall.storage.models import IngestRun, KBSource, Message
from citewall.storage.types import utcnow

from .replica_set import Replicas, first_seen, running_replicas
from .rig import QUESTIONS, turn_integrity_problems
from .services import VENV_BIN, ServeProcess, wait_until

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
#: How often each replica looks for due sources: often enough that a source registered as due
#: is synced well within ``PICKUP_S`` (the other tests register no scheduled source).
SYNC_POLL_S = 1


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Replicas]:
    """Both replicas, started once for this module (the kill test runs last)."""
    roles = {"watcher": "member", "limited": "member"}
    roles |= {f"chat-{i}": "member" for i in range(CHAT_CLIENTS)}
    with running_replicas(
        tmp_path_factory.mktemp("replicas"),
        embedder,
        pg_admin_url=PG_ADMIN_URL,
        redis_url=REDIS_URL,
        roles=roles,
        settings={"CITEWALL_SYNC_POLL_S": str(SYNC_POLL_S)},
    ) as running:
        yield running


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


#: Seconds within which both replicas must serve an admin's change to a card (issue 32).
CHANGE_S = 5.0
#: An external card of the small KB, and a question it answers.
TOGGLED_CARD = "help-labels-void-label"
TOGGLED_QUESTION = QUESTIONS[0]
#: The playbook an admin writes, then edits, through replica 1.
PLAYBOOK_ID = "pb-warehouse-damage-claims"
PLAYBOOK_TITLE = "Damage claims for parcels broken in a partner warehouse"
PLAYBOOK_QUESTION = "damage claim for a parcel broken in a partner warehouse"


def playbook_body(days: int) -> str:
    return (
        "A parcel broken in a partner warehouse is claimed from the warehouse, not the carrier. "
        f"Ask the merchant for photos of the box and the label, taken within {days} days of "
        "delivery, and open the claim from the shipment page under Warehouse damage."
    )


def member_serves(
    replicas: Replicas, readers: Iterator[str], card_id: str, question: str
) -> Callable[[ServeProcess], bool]:
    """Whether a replica's member search finds ``card_id`` (each call as the next reader)."""

    def serves(server: ServeProcess) -> bool:
        r = replicas.search(server, next(readers), question)
        assert r.status_code == 200, r.text
        return card_id in [hit["card_id"] for hit in r.json()["results"]]

    return serves


def admin_serves_text(
    replicas: Replicas, editors: Iterator[str], card_id: str, question: str, text: str
) -> Callable[[ServeProcess], bool]:
    """Whether a replica's admin search finds ``card_id`` with ``text`` in it."""

    def serves(server: ServeProcess) -> bool:
        r = httpx.post(
            f"{server.base_url}/api/v1/admin/search",
            json={"query": question},
            headers=replicas.headers(next(editors)),
            timeout=60,
        )
        assert r.status_code == 200, r.text
        return any(h["card_id"] == card_id and text in h["text"] for h in r.json()["results"])

    return serves


def chat_source_ids(replicas: Replicas, server: ServeProcess, who: str, question: str) -> set[str]:
    r = httpx.post(
        f"{server.base_url}/api/v1/chat",
        json={"message": question},
        headers=replicas.headers(who),
        timeout=60,
    )
    assert r.status_code == 200, r.text
    return {s["card_id"] for s in r.json()["sources"]}


def test_a_card_disabled_then_enabled_through_one_replica_reaches_both_within_5_s(
    replicas: Replicas,
) -> None:
    first, _ = replicas.servers
    readers = replicas.add_users("member", "reader", 40)
    serves = member_serves(replicas, readers, TOGGLED_CARD, TOGGLED_QUESTION)
    assert all(serves(server) for server in replicas.servers)
    assert all(
        TOGGLED_CARD in chat_source_ids(replicas, server, next(readers), TOGGLED_QUESTION)
        for server in replicas.servers
    )

    sent = time.monotonic()
    r = httpx.post(
        f"{first.base_url}/api/v1/admin/cards/{TOGGLED_CARD}/disable",
        headers=replicas.headers("operator"),
        timeout=60,
    )
    assert r.status_code == 200 and r.json()["disabled_at"] is not None, r.text
    gone = first_seen(
        replicas.servers, lambda server: not serves(server), since=sent, limit_s=CHANGE_S
    )
    assert None not in gone, f"a disabled card still served after {CHANGE_S} s: {gone}"
    for server in replicas.servers:
        assert not serves(server)
        assert TOGGLED_CARD not in chat_source_ids(
            replicas, server, next(readers), TOGGLED_QUESTION
        )

    sent = time.monotonic()
    r = httpx.post(
        f"{first.base_url}/api/v1/admin/cards/{TOGGLED_CARD}/enable",
        headers=replicas.headers("operator"),
        timeout=60,
    )
    assert r.status_code == 200 and r.json()["disabled_at"] is None, r.text
    back = first_seen(replicas.servers, serves, since=sent, limit_s=CHANGE_S)
    assert None not in back, f"an enabled card not served after {CHANGE_S} s: {back}"
    for server in replicas.servers:
        assert TOGGLED_CARD in chat_source_ids(replicas, server, next(readers), TOGGLED_QUESTION)


def test_a_playbook_saved_through_one_replica_is_served_with_its_new_text_by_the_other_within_5_s(
    replicas: Replicas,
) -> None:
    first, second = replicas.servers
    editors = replicas.add_users("admin", "editor", 20)
    headers = replicas.headers("operator")
    r = httpx.post(
        f"{first.base_url}/api/v1/admin/playbooks",
        json={"id": PLAYBOOK_ID, "title": PLAYBOOK_TITLE, "body": playbook_body(14)},
        headers=headers,
        timeout=60,
    )
    assert r.status_code == 201 and r.json()["version"] == 1, r.text
    written = admin_serves_text(replicas, editors, PLAYBOOK_ID, PLAYBOOK_QUESTION, "14 days")
    seen = first_seen(replicas.servers, written, since=time.monotonic(), limit_s=CHANGE_S)
    assert None not in seen, f"a new playbook not served after {CHANGE_S} s: {seen}"

    sent = time.monotonic()
    r = httpx.put(
        f"{first.base_url}/api/v1/admin/playbooks/{PLAYBOOK_ID}",
        json={"title": PLAYBOOK_TITLE, "body": playbook_body(30), "base_version": 1},
        headers=headers,
        timeout=60,
    )
    assert r.status_code == 200 and r.json()["version"] == 2, r.text
    edited = admin_serves_text(replicas, editors, PLAYBOOK_ID, PLAYBOOK_QUESTION, "30 days")
    seen = first_seen([second, first], edited, since=sent, limit_s=CHANGE_S)
    assert None not in seen, f"the edit not served after {CHANGE_S} s (replica 2, 1): {seen}"
    assert not written(second), "replica 2 still serves the playbook's old text"


#: The card file registered as a scheduled source while both replicas keep their schedule.
SCHEDULED_CARD = {
    "id": "help-labels-lithium-batteries",
    "title": "Shipping lithium batteries",
    "body": "Parcels with lithium batteries travel by road only. Mark the parcel with the UN3481 "
    "label when the batteries are packed with the device, and keep each battery under 100 Wh.",
    "url": "https://help.parcelry.example/labels/lithium-batteries",
    "license": "CC-BY-4.0",
}
SCHEDULED_QUESTION = "Which label does a parcel with lithium batteries need, UN3481?"


def register_scheduled_source(replicas: Replicas, tmp_path: Path, kb: Path) -> int:
    """``citewall sources add cards FILE --every 5m`` on the replicas' database, from a data dir
    of its own; the new source's id (due at once)."""
    data_dir = tmp_path / "registrar"
    data_dir.mkdir()
    done = subprocess.run(
        [str(VENV_BIN / "citewall"), "sources", "add", "cards", str(kb), "--every", "5m"],
        env={**os.environ, **replicas.env, "CITEWALL_DATA_DIR": str(data_dir)},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    first_line = done.stdout.splitlines()[0]
    assert first_line.startswith("source ") and ": cards " in first_line, done.stdout
    return int(first_line.removeprefix("source ").split(":")[0])


def scheduled_source(replicas: Replicas, source_id: int) -> tuple[KBSource, list[IngestRun]]:
    """The source's row and its runs, as the database holds them now."""
    engine = create_engine(replicas.database_url)
    try:
        with Session(engine, expire_on_commit=False) as session:
            source = session.get(KBSource, source_id)
            assert source is not None, f"no source {source_id}"
            query = select(IngestRun).where(IngestRun.source_id == source_id)
            return source, list(session.scalars(query.order_by(IngestRun.id)))
    finally:
        engine.dispose()


def test_a_due_source_is_synced_by_exactly_one_replica_and_served_by_both_within_5_s(
    replicas: Replicas, tmp_path: Path
) -> None:
    kb = tmp_path / "scheduled.jsonl"
    kb.write_text(json.dumps(SCHEDULED_CARD) + "\n", encoding="utf-8")
    readers = replicas.add_users("member", "scheduled", 40)
    serves = member_serves(replicas, readers, SCHEDULED_CARD["id"], SCHEDULED_QUESTION)
    assert not any(serves(server) for server in replicas.servers)

    source_id = register_scheduled_source(replicas, tmp_path, kb)
    registered, _ = scheduled_source(replicas, source_id)
    # Timed from the registration's commit (the source is due from then), not from the
    # command's exit: a replica may claim it while the command is still closing.
    since = time.monotonic() - (utcnow() - registered.created_at).total_seconds()
    seen = first_seen(replicas.servers, serves, since=since, limit_s=PICKUP_S)
    assert None not in seen, f"a due source's card not served after {PICKUP_S} s: {seen}"
    # Both replicas poll several more times: a second claim of the same due time would have
    # started its sync (and written its run) by then.
    time.sleep(3 * SYNC_POLL_S)
    source, runs = scheduled_source(replicas, source_id)
    assert [(r.status, r.added, r.refused) for r in runs] == [("applied", 1, 0)], [
        (r.status, r.added, r.unchanged, r.refused, r.note) for r in runs
    ]
    assert source.last_sync_at == runs[0].started_at
    assert source.next_sync_at == runs[0].started_at + timedelta(minutes=5)
    for server in replicas.servers:
        assert serves(server)


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
