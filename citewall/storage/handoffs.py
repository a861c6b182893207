"""The handoff outbox: a member's request for a person, stored first, delivered after.

A request is one ``Handoff`` row committed with the body to deliver (``create_handoff``); any
replica's delivery pass takes due rows with a lease (``claim_due``: one conditional UPDATE per
row, so two replicas never hold the same one) and records each attempt with its outcome
(``record_attempt``, which counts only while the lease is still the caller's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.orm import Session

from citewall.errors import UserError
from citewall.storage.db import begin_write
from citewall.storage.failures import storage_errors
from citewall.storage.models import (
    HANDOFF_STATUSES,
    Conversation,
    Handoff,
    HandoffAttempt,
    HandoffStatus,
    User,
)
from citewall.storage.paging import check_page
from citewall.storage.types import utcnow

#: The longest message a member may add to a handoff (characters, after trimming).
MESSAGE_MAX_CHARS = 2000

#: What an attempt's outcome does to its handoff.
Outcome = Literal["delivered", "retry", "failed"]


def clean_message(message: str | None) -> str | None:
    """A handoff message as stored: trimmed, ``None`` when empty; ``UserError`` over the limit.

    >>> clean_message("  please call me  "), clean_message("  ")
    ('please call me', None)
    """
    if message is None:
        return None
    trimmed = message.strip()
    if len(trimmed) > MESSAGE_MAX_CHARS:
        raise UserError(
            f"a handoff message has at most {MESSAGE_MAX_CHARS} characters, got {len(trimmed)}"
        )
    return trimmed or None


def latest_handoff(session: Session, conversation_id: str) -> Handoff | None:
    """The conversation's most recent handoff, if it has one."""
    with storage_errors(session, "reading handoffs"):
        return session.scalar(
            select(Handoff)
            .where(Handoff.conversation_id == conversation_id)
            .order_by(Handoff.created_at.desc(), Handoff.id.desc())
            .limit(1)
        )


def has_handoff(session: Session, user_id: int) -> bool:
    """Whether ``user_id`` has ever asked for a person."""
    with storage_errors(session, "reading handoffs"):
        return (
            session.scalar(select(Handoff.id).where(Handoff.user_id == user_id).limit(1))
            is not None
        )


def member_handoffs(session: Session, user_id: int) -> list[Handoff]:
    """Every request for a person ``user_id`` made, oldest first (their export)."""
    with storage_errors(session, "reading handoffs"):
        return list(
            session.scalars(
                select(Handoff)
                .where(Handoff.user_id == user_id)
                .order_by(Handoff.created_at, Handoff.id)
            )
        )


def create_handoff(
    session: Session,
    conversation: Conversation,
    *,
    handoff_id: str,
    message: str | None,
    payload: dict[str, Any],
    now: datetime | None = None,
) -> tuple[Handoff, bool]:
    """Commit a pending handoff of ``conversation``, due for delivery now.

    A conversation that has had no new message since its last handoff keeps that one when the
    member adds nothing new (no note, or the same note: a second click is the same request);
    a new note is a new request, delivered with it, so nothing the member writes is dropped.
    ``(handoff, created)`` says which it is.
    """
    now = now if now is not None else utcnow()
    with storage_errors(session, "saving a handoff", catch_all=True):
        begin_write(session)
        # Row lock on PostgreSQL (SQLite's write lock is held already): two requests at once
        # make one handoff.
        session.execute(
            select(Conversation.id).where(Conversation.id == conversation.id).with_for_update()
        )
        last = session.scalar(
            select(Handoff)
            .where(Handoff.conversation_id == conversation.id)
            .order_by(Handoff.created_at.desc(), Handoff.id.desc())
            .limit(1)
        )
        nothing_new = message is None or (last is not None and message == last.message)
        if last is not None and last.created_at >= conversation.updated_at and nothing_new:
            session.commit()
            return last, False
        row = Handoff(
            id=handoff_id,
            conversation_id=conversation.id,
            user_id=conversation.user_id,
            message=message,
            payload=payload,
            status="pending",
            attempts=0,
            next_attempt_at=now,
            created_at=now,
        )
        session.add(row)
        session.commit()
    return row, True


def claim_due(
    session: Session, *, owner: str, now: datetime, lease: timedelta, limit: int = 20
) -> list[Handoff]:
    """Take the lease on up to ``limit`` pending handoffs due by ``now`` whose lease is free or
    has run out; the ones this call won, oldest first.

    Each row is taken by one ``UPDATE ... WHERE`` that repeats the conditions: on PostgreSQL
    the second of two replicas waits for the first's row lock, re-checks and matches nothing;
    on SQLite writers take turns. Only a row count of 1 is a win.
    """
    free = and_(
        Handoff.status == "pending",
        Handoff.next_attempt_at <= now,
        or_(Handoff.lease_until.is_(None), Handoff.lease_until <= now),
    )
    won: list[str] = []
    with storage_errors(session, "claiming handoffs", catch_all=True):
        candidates = session.scalars(
            select(Handoff.id).where(free).order_by(Handoff.next_attempt_at).limit(limit)
        ).all()
        session.rollback()  # end the read: each claim below is its own short transaction
        for handoff_id in candidates:
            result = session.execute(
                update(Handoff)
                .where(Handoff.id == handoff_id, free)
                .values(lease_owner=owner, lease_until=now + lease)
                .execution_options(synchronize_session=False)
            )
            session.commit()
            if getattr(result, "rowcount", 0) == 1:
                won.append(handoff_id)
        if not won:
            return []
        rows = session.scalars(
            select(Handoff).where(Handoff.id.in_(won)).order_by(Handoff.created_at)
        ).all()
        session.commit()
        # Detached with their values loaded: a later rollback on this session cannot expire them.
        for row in rows:
            session.expunge(row)
    return list(rows)


def record_attempt(
    session: Session,
    handoff: Handoff,
    *,
    owner: str,
    now: datetime,
    outcome: Outcome,
    status_code: int | None,
    error: str | None,
    duration_ms: float,
    next_attempt_at: datetime | None = None,
) -> bool:
    """Record one attempt and what it does to the handoff (``outcome``), releasing the lease.

    Counts only while ``owner`` still holds the lease: ``False`` (nothing written) when it was
    lost, e.g. the attempt outlasted it and another replica took the row.
    """
    values: dict[str, Any] = {
        "attempts": Handoff.attempts + 1,
        "lease_owner": None,
        "lease_until": None,
        "last_error": error,
    }
    if outcome == "delivered":
        values |= {"status": "delivered", "delivered_at": now}
    elif outcome == "failed":
        values["status"] = "failed"
    else:
        values["next_attempt_at"] = next_attempt_at or now
    with storage_errors(session, "recording a handoff attempt", catch_all=True):
        result = session.execute(
            update(Handoff)
            .where(Handoff.id == handoff.id, Handoff.lease_owner == owner)
            .values(**values)
            .execution_options(synchronize_session=False)
        )
        if getattr(result, "rowcount", 0) != 1:
            session.rollback()
            return False
        session.add(
            HandoffAttempt(
                handoff_id=handoff.id,
                attempted_at=now,
                status_code=status_code,
                error=error,
                duration_ms=duration_ms,
                replica=owner,
            )
        )
        session.commit()
    return True


@dataclass(frozen=True, slots=True)
class HandoffListing:
    """A handoff as the admin list shows it, with its attempts (oldest first)."""

    handoff: Handoff
    user_name: str
    attempts: list[HandoffAttempt] = field(default_factory=list)


def list_handoffs(
    session: Session,
    *,
    status: HandoffStatus | None = None,
    limit: int = 50,
    offset: int = 0,
) -> tuple[list[HandoffListing], dict[str, int]]:
    """Handoffs, newest first (only ``status`` ones when given), and the count per status."""
    check_page(limit, offset)
    if status is not None and status not in HANDOFF_STATUSES:
        raise UserError(f"status must be one of {', '.join(HANDOFF_STATUSES)}, got {status!r}")
    query = select(Handoff, User.name).join(User, User.id == Handoff.user_id)
    if status is not None:
        query = query.where(Handoff.status == status)
    query = query.order_by(Handoff.created_at.desc(), Handoff.id.desc()).limit(limit).offset(offset)
    with storage_errors(session, "listing handoffs"):
        rows = session.execute(query).all()
        ids = [h.id for h, _ in rows]
        attempts: dict[str, list[HandoffAttempt]] = {i: [] for i in ids}
        if ids:
            for attempt in session.scalars(
                select(HandoffAttempt)
                .where(HandoffAttempt.handoff_id.in_(ids))
                .order_by(HandoffAttempt.attempted_at, HandoffAttempt.id)
            ):
                attempts[attempt.handoff_id].append(attempt)
        counts: dict[str, int] = {s: 0 for s in HANDOFF_STATUSES}
        for name, n in session.execute(
            select(Handoff.status, func.count(Handoff.id)).group_by(Handoff.status)
        ):
            counts[name] = int(n)
    return [HandoffListing(h, name, attempts[h.id]) for h, name in rows], counts
