"""Erasure on request: a member's personal data removed, their analytics kept unnamed.

Two steps, so an interrupted erasure resumes (``resume_erasures``) and never half-happens:

1. ``request_erasure`` records the request (with its audit line) and disables the user and
   every token and session of theirs, in one transaction: from then on nobody signs in as
   them, and the request is on record before anything is removed.
2. ``carry_out`` removes their conversations' words batch by batch, as retention does
   (``content.remove_content``), then in one last transaction moves what the analytics count
   (conversations with their answers' statuses and retrieval events, ratings, exposure rows)
   to a fresh pseudonymous user, deletes the user row (name, email, issuer and subject) with
   its tokens and sessions, and stores the receipt.

A member of a host site who signs in again afterwards is a new user: nothing links them to
the pseudonym. The exposure record (which internal cards reached them, for the corpus's
protection) stays as those rows, under the pseudonym.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Collection
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from citewall.errors import NotFoundError, UserError
from citewall.storage.audit import AuditEvent, entry_row
from citewall.storage.content import CONTENT_COLUMNS, holding_words, remove_content
from citewall.storage.db import begin_write
from citewall.storage.failures import storage_errors
from citewall.storage.models import (
    ApiToken,
    Conversation,
    Erasure,
    Exposure,
    ExposureReservation,
    Feedback,
    Handoff,
    User,
)
from citewall.storage.removal import PSEUDONYM_ISSUER
from citewall.storage.retention import BATCH

#: The name a pseudonymous user gets: this prefix and random hex digits.
PSEUDONYM_PREFIX = "erased-"


def find_user(session: Session, name_or_id: str) -> User:
    """The user called ``name_or_id``, or with that id when it is a number and no user has
    that name; ``NotFoundError`` otherwise."""
    with storage_errors(session, "finding the user to erase"):
        user = session.scalar(select(User).where(User.name == name_or_id))
        if user is None and name_or_id.isdigit():
            user = session.get(User, int(name_or_id))
    if user is None:
        raise NotFoundError(f"no user named {name_or_id!r} or with that id")
    return user


def request_erasure(
    session: Session, user_id: int, *, requested_by: str, now: datetime, audit: AuditEvent
) -> Erasure:
    """Record the erasure of user ``user_id`` (with ``audit``, its audit line), disable them
    and revoke their tokens and sessions: one transaction, committed. A request already open
    for them is returned as it is. ``NotFoundError`` for an unknown user; ``UserError`` for a
    pseudonymous one (already erased)."""
    with storage_errors(session, "recording the erasure request", catch_all=True):
        begin_write(session)
        open_request = session.scalar(
            select(Erasure).where(Erasure.user_id == user_id, Erasure.status == "requested")
        )
        if open_request is not None:
            session.commit()
            return open_request
        user = session.get(User, user_id)
        if user is None:
            raise NotFoundError(f"no user with id {user_id}")
        if user.issuer == PSEUDONYM_ISSUER:
            raise UserError(f"user {user_id} is the pseudonym of an erased user already")
        erasure = Erasure(
            user_id=user_id,
            requested_by=requested_by[:320],
            requested_at=now,
            status="requested",
            receipt={"removed": {c.name: 0 for c in CONTENT_COLUMNS}},
        )
        session.add(erasure)
        session.add(entry_row(audit, now))
        if user.disabled_at is None:
            user.disabled_at = now
        session.execute(
            update(ApiToken)
            .where(ApiToken.user_id == user_id, ApiToken.revoked_at.is_(None))
            .values(revoked_at=now)
        )
        session.commit()
    return erasure


def _conversations_with_words(session: Session, user_id: int, limit: int) -> list[str]:
    rows = session.scalars(
        select(Conversation.id)
        .where(Conversation.user_id == user_id, holding_words(session.get_bind().dialect.name))
        .order_by(Conversation.id)
        .limit(limit)
    )
    return [str(i) for i in rows]


def _add_removed(erasure: Erasure, removed: dict[str, int]) -> None:
    counts = dict(erasure.receipt.get("removed", {}))
    for name, n in removed.items():
        counts[name] = int(counts.get(name, 0)) + n
    erasure.receipt = {**erasure.receipt, "removed": counts}


def _count(session: Session, query: Any) -> int:
    return int(session.scalar(query) or 0)


def carry_out(
    sessions: sessionmaker[Session],
    erasure_id: int,
    *,
    clock: Callable[[], datetime],
    canned_replies: Collection[str] = (),
    batch: int = BATCH,
) -> Erasure:
    """Carry out the recorded erasure ``erasure_id`` (see the module); the done request with
    its receipt. Safe to call again on one interrupted anywhere, or already done. ``clock``
    dates each batch's removal and the completion when they happen (the request was dated
    when it was recorded)."""
    while True:
        with sessions() as session, storage_errors(session, "erasing", catch_all=True):
            erasure = session.get(Erasure, erasure_id)
            if erasure is None:
                raise NotFoundError(f"no erasure request {erasure_id}")
            if erasure.status == "done":
                session.commit()
                return erasure
            ids = _conversations_with_words(session, erasure.user_id, batch)
            if not ids:
                session.commit()
                break
            # The batch and its counts on the receipt: one transaction.
            removed = remove_content(
                session, ids, now=clock(), canned_replies=canned_replies, commit=False
            )
            _add_removed(erasure, removed)
            session.commit()
    with sessions() as session, storage_errors(session, "erasing", catch_all=True):
        begin_write(session)
        erasure = session.get(Erasure, erasure_id, with_for_update=True)
        assert erasure is not None
        if erasure.status == "done":  # another process finished it meanwhile
            session.commit()
            return erasure
        user_id = erasure.user_id
        now = clock()
        # A turn that was under way when the request was recorded may have been saved since.
        late = _conversations_with_words(session, user_id, 1_000_000)
        if late:
            removed = remove_content(
                session, late, now=now, canned_replies=canned_replies, commit=False
            )
            _add_removed(erasure, removed)
        user = session.get(User, user_id)
        removed_user = {"users.name": 0, "users.email": 0, "api_tokens": 0, "sessions": 0}
        kept = {"conversations": 0, "feedback": 0, "exposures": 0, "handoffs": 0}
        if user is not None:
            tokens = list(session.scalars(select(ApiToken).where(ApiToken.user_id == user_id)))
            removed_user = {
                "users.name": 1,
                "users.email": int(user.email is not None),
                "api_tokens": sum(t.expires_at is None for t in tokens),
                "sessions": sum(t.expires_at is not None for t in tokens),
            }
            random_part = secrets.token_hex(8)
            pseudonym = User(
                name=f"{PSEUDONYM_PREFIX}{random_part}",
                issuer=PSEUDONYM_ISSUER,
                subject=random_part,
                role="member",
                disabled_at=now,
                created_at=now,
            )
            session.add(pseudonym)
            session.flush()
            # Moved, not deleted: resolution and entry performance count the handoffs too.
            for model in (Conversation, Feedback, Exposure, Handoff):
                kept_rows = _count(
                    session, select(func.count()).select_from(model).where(model.user_id == user_id)
                )
                kept[model.__tablename__] = kept_rows
                session.execute(
                    update(model).where(model.user_id == user_id).values(user_id=pseudonym.id)
                )
            session.execute(
                delete(ExposureReservation).where(ExposureReservation.user_id == user_id)
            )
            session.execute(delete(ApiToken).where(ApiToken.user_id == user_id))
            session.execute(delete(User).where(User.id == user_id))
        receipt = dict(erasure.receipt)
        receipt["removed"] = {**receipt.get("removed", {}), **removed_user}
        receipt["kept"] = kept
        erasure.receipt = receipt
        erasure.status = "done"
        erasure.completed_at = now
        session.commit()
    return erasure


def pending_erasures(session: Session) -> list[int]:
    """The erasure requests recorded and not yet carried out, oldest first."""
    with storage_errors(session, "reading erasure requests"):
        ids = list(
            session.scalars(
                select(Erasure.id).where(Erasure.status == "requested").order_by(Erasure.id)
            )
        )
        session.commit()
    return ids


def resume_erasures(
    sessions: sessionmaker[Session],
    *,
    clock: Callable[[], datetime],
    canned_replies: Collection[str] = (),
) -> list[Erasure]:
    """Carry out every erasure recorded and not yet done (one interrupted, e.g.)."""
    with sessions() as session:
        ids = pending_erasures(session)
    return [carry_out(sessions, i, clock=clock, canned_replies=canned_replies) for i in ids]


def list_erasures(session: Session, *, limit: int = 50, offset: int = 0) -> list[Erasure]:
    """Erasure receipts, newest first."""
    with storage_errors(session, "reading erasure receipts"):
        return list(
            session.scalars(select(Erasure).order_by(Erasure.id.desc()).limit(limit).offset(offset))
        )
