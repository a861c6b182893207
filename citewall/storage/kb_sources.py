"""Registered KB sources and their sync history (``kb_sources``, ``ingest_runs``).

The list lives in the database so that every replica syncs the same sources. Write functions
commit; a source's run and its new state (cards, failing pages, next sync) are one transaction.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from citewall.errors import ConflictError, NotFoundError, UserError
from citewall.kb.audiences import audience_names
from citewall.storage.audit import AuditEvent, entry_row
from citewall.storage.failures import storage_errors
from citewall.storage.models import IngestRun, KBSource, SourceKind, SyncStatus
from citewall.storage.types import utcnow


@dataclass(frozen=True, slots=True)
class RegisteredSource:
    """A source as stored: what it is, its options and schedule, and what its last sync left."""

    id: int
    kind: SourceKind
    location: str
    license: str | None
    every_s: int | None
    card_ids: tuple[str, ...]
    failing: Mapping[str, int]
    last_sync_at: datetime | None
    next_sync_at: datetime | None
    #: The groups its cards are for at every sync (``kb.audiences``); empty: every member.
    audiences: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Refused:
    """A page or card a sync did not take, and why (``where``: a URL, or file:line)."""

    where: str
    reason: str


@dataclass(frozen=True, slots=True)
class SyncRun:
    """What one sync did, as stored in ``ingest_runs``."""

    status: SyncStatus
    started_at: datetime
    duration_s: float = 0.0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    refusals: tuple[Refused, ...] = ()
    note: str = ""
    stale: tuple[str, ...] = ()
    #: Set when read back.
    id: int | None = None
    source_id: int | None = None

    @property
    def refused(self) -> int:
        return len(self.refusals)


@dataclass(frozen=True, slots=True)
class SourceState:
    """A source's state after a sync: recorded with its run."""

    card_ids: Sequence[str]
    failing: Mapping[str, int] = field(default_factory=dict)


def _source(row: KBSource) -> RegisteredSource:
    return RegisteredSource(
        id=row.id,
        kind=row.kind,  # type: ignore[arg-type]  # the check constraint keeps it a SourceKind
        location=row.location,
        license=row.license,
        every_s=row.every_s,
        card_ids=tuple(row.card_ids or ()),
        failing=dict(row.failing or {}),
        last_sync_at=row.last_sync_at,
        next_sync_at=row.next_sync_at,
        audiences=tuple(row.audiences or ()),
    )


def _run(row: IngestRun) -> SyncRun:
    return SyncRun(
        id=row.id,
        source_id=row.source_id,
        status=row.status,  # type: ignore[arg-type]  # the check constraint keeps it a status
        started_at=row.started_at,
        duration_s=row.duration_s,
        added=row.added,
        updated=row.updated,
        unchanged=row.unchanged,
        removed=row.removed,
        refusals=tuple(Refused(r["where"], r["reason"]) for r in row.refusals or ()),
        note=row.note,
        stale=tuple(row.stale or ()),
    )


def add_source(
    session: Session,
    kind: SourceKind,
    location: str,
    *,
    license: str | None = None,
    every_s: int | None = None,
    audiences: Sequence[str] = (),
    now: datetime,
    audit_event: AuditEvent | None = None,
) -> RegisteredSource:
    """Register a source, due for its first sync at once; ``ConflictError`` if it exists.
    ``audiences``: the groups its cards are for (``UserError`` naming a bad one).
    ``audit_event`` is appended in the same transaction (its target names the new id)."""
    row = KBSource(
        kind=kind,
        location=location,
        license=license,
        every_s=every_s,
        audiences=source_audiences(audiences),
        card_ids=[],
        failing={},
        created_at=now,
        next_sync_at=now if every_s is not None else None,
    )
    taken = select(KBSource.id).where(KBSource.kind == kind, KBSource.location == location)
    with storage_errors(session, "registering the source"):
        if session.scalar(taken) is not None:
            raise ConflictError(f"the {kind} source {location} is registered already")
        session.add(row)
        session.flush()
        if audit_event is not None:
            event = dataclasses.replace(audit_event, target=f"source:{row.id}")
            session.add(entry_row(event, now))
        session.commit()
    return _source(row)


def ensure_source(
    session: Session, kind: SourceKind, location: str, *, now: datetime
) -> RegisteredSource:
    """The source registered as ``kind`` at ``location``, registered now if it is not: a
    source the product makes itself (the demo KB, the playbooks, the uploads folder). Two
    processes asking at once get the one source."""
    found = find_source(session, kind, location)
    if found is not None:
        return found
    try:
        return add_source(session, kind, location, now=now)
    except ConflictError:  # another process registered it a moment ago
        session.rollback()
        again = find_source(session, kind, location)
        if again is None:
            raise
        return again


def source_audiences(audiences: Sequence[str]) -> list[str]:
    """Group names for a source, sorted and without duplicates; ``UserError`` naming a bad one.

    >>> source_audiences(["partners", "enterprise", "partners"])
    ['enterprise', 'partners']
    """
    try:
        return list(audience_names(list(audiences)))
    except ValueError as exc:
        raise UserError(f"--audience: {exc}") from None


def set_audiences(
    session: Session,
    source_id: int,
    audiences: Sequence[str],
    audit_event: AuditEvent | None = None,
) -> RegisteredSource:
    """Replace the groups a source's cards are for (none: every member); its next sync
    re-labels its cards. ``audit_event`` is appended in the same transaction."""
    names = source_audiences(audiences)
    with storage_errors(session, "setting the source's audiences"):
        row = session.get(KBSource, source_id)
        if row is None:
            raise NotFoundError(f"no source {source_id}: `citewall sources list` shows them")
        row.audiences = names
        if audit_event is not None:
            session.add(entry_row(audit_event, utcnow()))
        session.commit()
        return _source(row)


def list_sources(session: Session) -> list[RegisteredSource]:
    with storage_errors(session, "reading the sources"):
        return [_source(r) for r in session.scalars(select(KBSource).order_by(KBSource.id))]


def find_source(session: Session, kind: SourceKind, location: str) -> RegisteredSource | None:
    """The source registered as ``kind`` at ``location``, if any."""
    query = select(KBSource).where(KBSource.kind == kind, KBSource.location == location)
    with storage_errors(session, "reading the source"):
        row = session.scalar(query)
    return _source(row) if row is not None else None


def cards_of_kind(session: Session, kind: SourceKind) -> frozenset[str]:
    """The cards the sources of ``kind`` hold (the playbooks: what no other ingest may touch)."""
    query = select(KBSource.card_ids).where(KBSource.kind == kind)
    with storage_errors(session, f"reading the {kind} sources"):
        return frozenset(card_id for ids in session.scalars(query) for card_id in ids or ())


def get_source(session: Session, source_id: int) -> RegisteredSource:
    with storage_errors(session, "reading the source"):
        row = session.get(KBSource, source_id)
    if row is None:
        raise NotFoundError(f"no source {source_id}: `citewall sources list` shows them")
    return _source(row)


def claim_due(session: Session, now: datetime, lease_s: int) -> list[RegisteredSource]:
    """Claim the scheduled sources whose next sync is due, the longest waiting first, so that
    of several replicas (or cron jobs) asking at once exactly one syncs each.

    A claim moves the source's next sync ``lease_s`` ahead, if no one moved it since it was
    read (a compare-and-set, atomic on SQLite and PostgreSQL alike); the sync's run then sets
    the real next time. A claimer that dies loses its claim when the lease ends.
    """
    query = (
        select(KBSource.id, KBSource.next_sync_at)
        .where(KBSource.next_sync_at.is_not(None), KBSource.next_sync_at <= now)
        .order_by(KBSource.next_sync_at, KBSource.id)
    )
    lease_until = now + timedelta(seconds=lease_s)
    claimed: list[int] = []
    with storage_errors(session, "claiming the due sources"):
        for source_id, seen in session.execute(query).all():
            moved = session.execute(
                update(KBSource)
                .where(KBSource.id == source_id, KBSource.next_sync_at == seen)
                .values(next_sync_at=lease_until)
            )
            session.commit()
            if moved.rowcount == 1:  # type: ignore[attr-defined]  # a CursorResult
                claimed.append(source_id)
        return [_source(row) for i in claimed if (row := session.get(KBSource, i)) is not None]


def record_sync(
    session: Session,
    source_id: int,
    run: SyncRun,
    state: SourceState | None,
    audit_event: AuditEvent | None = None,
    *,
    commit: bool = True,
) -> SyncRun:
    """Store ``run`` and, when it was applied, the source's new state; schedule the next sync.
    ``audit_event`` (the change to the cards) is appended in the same transaction;
    ``commit=False`` leaves it open for the caller's own rows (the run has its id already).

    A held or failed run leaves the source's cards as they were (``state`` None keeps them).
    """
    with storage_errors(session, "recording the sync"):
        source = session.get(KBSource, source_id)
        if source is None:
            raise NotFoundError(f"no source {source_id}: it was removed during the sync")
        if state is not None:
            source.card_ids = sorted(state.card_ids)
            source.failing = dict(state.failing)
        source.last_sync_at = run.started_at
        if source.every_s is not None:
            source.next_sync_at = run.started_at + timedelta(seconds=source.every_s)
        row = IngestRun(
            source_id=source_id,
            started_at=run.started_at,
            duration_s=run.duration_s,
            status=run.status,
            added=run.added,
            updated=run.updated,
            unchanged=run.unchanged,
            removed=run.removed,
            refused=run.refused,
            refusals=[{"where": r.where, "reason": r.reason} for r in run.refusals],
            note=run.note,
            stale=list(run.stale),
        )
        session.add(row)
        if audit_event is not None:
            session.add(entry_row(audit_event, run.started_at))
        if commit:
            session.commit()
        else:
            session.flush()
        return _run(row)


def remove_source(
    session: Session, source_id: int, audit_event: AuditEvent | None = None
) -> RegisteredSource:
    """Unregister a source (its runs stay, without it); returns it as it was. ``audit_event``
    is appended in the same transaction."""
    with storage_errors(session, "removing the source"):
        row = session.get(KBSource, source_id)
        if row is None:
            raise NotFoundError(f"no source {source_id}: `citewall sources list` shows them")
        source = _source(row)
        session.delete(row)
        if audit_event is not None:
            session.add(entry_row(audit_event, utcnow()))
        session.commit()
    return source


def last_runs(session: Session) -> dict[int, SyncRun]:
    """Each source's latest run."""
    latest = (
        select(IngestRun.source_id, func.max(IngestRun.id).label("id"))
        .where(IngestRun.source_id.is_not(None))
        .group_by(IngestRun.source_id)
        .subquery()
    )
    query = select(IngestRun).join(latest, IngestRun.id == latest.c.id)
    with storage_errors(session, "reading the last syncs"):
        return {row.source_id: _run(row) for row in session.scalars(query) if row.source_id}


def source_runs(session: Session, source_id: int, limit: int = 20) -> list[SyncRun]:
    """A source's runs, newest first."""
    query = (
        select(IngestRun)
        .where(IngestRun.source_id == source_id)
        .order_by(IngestRun.id.desc())
        .limit(limit)
    )
    with storage_errors(session, "reading the source's syncs"):
        return [_run(r) for r in session.scalars(query)]


def runs_by_id(session: Session, run_ids: Sequence[int]) -> dict[int, SyncRun]:
    """The stored runs among ``run_ids``, by id."""
    query = select(IngestRun).where(IngestRun.id.in_(list(run_ids)))
    with storage_errors(session, "reading the runs"):
        return {row.id: _run(row) for row in session.scalars(query)}
