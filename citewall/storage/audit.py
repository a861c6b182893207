"""The audit log: who read or changed which member's data, when, and from which address.

Append-only by construction: this module writes rows (``append``), reads them (``entries``)
and trims the ones older than the audit retention window (``trim``); nothing updates one, and
no route deletes one. A line names its actor by user name and id as they were then (not a
foreign key: the line outlives the user)::

    append(session, AuditEvent(actor="ada", actor_user_id=3, via="admin_proxy",
                               action="conversation.read", target="conversation:...",
                               address="10.0.0.7"))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from citewall.storage.failures import storage_errors
from citewall.storage.models import AuditEntry
from citewall.storage.paging import check_page
from citewall.storage.types import utcnow

#: What a line records: an admin's read of members' words, a member's export, an erasure, a
#: change to the knowledge base or to its registered sources, and the retention runs that
#: removed content.
AuditAction = Literal[
    "conversation.read",
    "conversations.list",
    "handoffs.read",
    "feedback.read",
    "knowledge_gaps.read",
    "retrieval_events.read",
    "exposure.read",
    "export",
    "erasure",
    "cards.change",
    "sources.change",
    "retention",
    "test_questions.change",
]
AUDIT_ACTIONS: tuple[AuditAction, ...] = (
    "conversation.read",
    "conversations.list",
    "handoffs.read",
    "feedback.read",
    "knowledge_gaps.read",
    "retrieval_events.read",
    "exposure.read",
    "export",
    "erasure",
    "cards.change",
    "sources.change",
    "retention",
    "test_questions.change",
)
#: How the actor came: a bearer token, the identity-aware proxy, a command on the host, or
#: citewall itself (the retention schedule).
Via = Literal["bearer", "admin_proxy", "cli", "system"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEvent:
    """One line as it is appended."""

    actor: str
    actor_user_id: int | None
    via: Via
    action: AuditAction
    target: str
    address: str | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Actor:
    """Who makes a change or reads members' words, as every audit line names them: an admin
    of a request, the operator of a command on the host, or citewall itself."""

    name: str
    user_id: int | None
    via: Via
    address: str | None = None

    def event(
        self, action: AuditAction, target: str, detail: Mapping[str, Any] | None = None
    ) -> AuditEvent:
        """The line this actor appends for ``action`` on ``target``."""
        return AuditEvent(
            actor=self.name,
            actor_user_id=self.user_id,
            via=self.via,
            action=action,
            target=target,
            address=self.address,
            detail=dict(detail or {}),
        )


def entry_row(event: AuditEvent, now: datetime) -> AuditEntry:
    """The row of ``event`` stamped ``now`` (for callers appending inside their own
    transaction)."""
    return AuditEntry(
        at=now,
        actor=event.actor[:320],
        actor_user_id=event.actor_user_id,
        via=event.via,
        action=event.action,
        target=event.target[:255],
        address=event.address[:64] if event.address else None,
        detail=dict(event.detail),
    )


def append(session: Session, event: AuditEvent, *, now: datetime | None = None) -> AuditEntry:
    """Append ``event`` and commit; ``StorageError`` if it cannot be written (the caller then
    does not show what it was about to)."""
    with storage_errors(session, "writing the audit log", catch_all=True):
        row = entry_row(event, now or utcnow())
        session.add(row)
        session.commit()
    return row


def entries(
    session: Session,
    *,
    action: AuditAction | None = None,
    limit: int = 50,
    offset: int = 0,
) -> tuple[list[AuditEntry], int]:
    """One page of the log, newest first, and how many lines match in all."""
    check_page(limit, offset)
    conditions = [AuditEntry.action == action] if action is not None else []
    with storage_errors(session, "reading the audit log"):
        total = int(session.scalar(select(func.count(AuditEntry.id)).where(*conditions)) or 0)
        rows = list(
            session.scalars(
                select(AuditEntry)
                .where(*conditions)
                .order_by(AuditEntry.at.desc(), AuditEntry.id.desc())
                .limit(limit)
                .offset(offset)
            )
        )
    return rows, total


def trim(session: Session, before: datetime) -> int:
    """Delete the lines written before ``before`` (the audit retention); how many went."""
    with storage_errors(session, "trimming the audit log"):
        result = session.execute(delete(AuditEntry).where(AuditEntry.at < before))
        session.commit()
    return int(getattr(result, "rowcount", 0) or 0)
