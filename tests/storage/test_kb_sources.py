"""Registered sources on SQLite and PostgreSQL: a due source is claimed by exactly one of
several claimers at once, and its run schedules the next sync."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy.orm import Session

from citewall.errors import ConflictError, NotFoundError
from citewall.storage import kb_sources
from citewall.storage.db import make_engine, make_session_factory
from citewall.storage.kb_sources import RegisteredSource, SourceState, SyncRun
from citewall.storage.models import SourceKind
from citewall.storage.schema import migrate
from citewall.storage.types import utcnow


def test_each_due_source_is_claimed_once_by_concurrent_claimers(database_url: str) -> None:
    migrate(database_url)
    engine = make_engine(database_url)
    sessions = make_session_factory(engine)
    try:
        now = utcnow()
        with sessions() as session:
            for n in range(6):
                kb_sources.add_source(
                    session, "cards", f"/kb/{n}.jsonl", every_s=3600, now=now - timedelta(minutes=n)
                )
            kb_sources.add_source(session, "cards", "/kb/manual.jsonl", now=now)  # no schedule
        claims: list[list[int]] = []
        start = threading.Barrier(4)

        def claim() -> None:
            with sessions() as session:
                start.wait()
                got = kb_sources.claim_due(session, now, lease_s=600)
                claims.append([s.id for s in got])

        threads = [threading.Thread(target=claim) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        claimed = sorted(i for got in claims for i in got)
        assert claimed == [1, 2, 3, 4, 5, 6], claims
        with sessions() as session:
            assert kb_sources.claim_due(session, now, lease_s=600) == []  # leased
            later = now + timedelta(seconds=601)
            assert len(kb_sources.claim_due(session, later, lease_s=600)) == 6  # lease ended
    finally:
        engine.dispose()


def test_a_run_schedules_the_next_sync_and_keeps_a_held_sources_cards(database_url: str) -> None:
    migrate(database_url)
    engine = make_engine(database_url)
    sessions = make_session_factory(engine)
    try:
        now = utcnow()
        with sessions() as session:
            source = kb_sources.add_source(session, "cards", "/kb/a.jsonl", every_s=60, now=now)
            with pytest.raises(ConflictError):
                kb_sources.add_source(session, "cards", "/kb/a.jsonl", now=now)
            kb_sources.record_sync(
                session, source.id, SyncRun("applied", now, added=2), SourceState(["b", "a"])
            )
            kb_sources.record_sync(session, source.id, SyncRun("held", now, note="x"), None)
            stored = kb_sources.get_source(session, source.id)
            assert stored.card_ids == ("a", "b")  # the held run kept them
            assert stored.next_sync_at == now + timedelta(seconds=60)
            assert [r.status for r in kb_sources.source_runs(session, source.id)] == [
                "held",
                "applied",
            ]
            assert kb_sources.last_runs(session)[source.id].status == "held"
            kb_sources.remove_source(session, source.id)
            with pytest.raises(NotFoundError):
                kb_sources.get_source(session, source.id)
    finally:
        engine.dispose()


def test_a_source_the_product_makes_is_registered_once(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ensure_source``: found when registered; registered when not; and when another process
    registers it between the look and the insert, that one is returned."""
    engine = make_engine(database_url)
    migrate(engine)
    sessions = make_session_factory(engine)
    location = f"/srv/uploads-{utcnow().timestamp()}"
    try:
        with sessions() as session:
            first = kb_sources.ensure_source(session, "uploads", location, now=utcnow())
        with sessions() as session:
            again = kb_sources.ensure_source(session, "uploads", location, now=utcnow())
        assert again.id == first.id
        # The race: the first look finds nothing, the insert then finds it taken.
        real_find = kb_sources.find_source
        looks: list[str] = []

        def blind_first(session: Session, kind: SourceKind, where: str) -> RegisteredSource | None:
            looks.append(where)
            return None if len(looks) == 1 else real_find(session, kind, where)

        monkeypatch.setattr(kb_sources, "find_source", blind_first)
        with sessions() as session:
            raced = kb_sources.ensure_source(session, "uploads", location, now=utcnow())
        assert raced.id == first.id and len(looks) == 2  # looked again after the conflict
        with sessions() as session:
            listed = [s for s in kb_sources.list_sources(session) if s.location == location]
        assert [s.id for s in listed] == [first.id]
    finally:
        engine.dispose()
