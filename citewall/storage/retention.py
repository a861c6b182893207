"""Retention: the words of conversations nobody added to within the window are removed, in
batches (``content.remove_content``); the analytics rows stay, so every rollup counts the
period as before. Audit log lines older than their own window are trimmed.

    report = run_retention(sessions, RetentionPolicy(days=90), now=utcnow())

Each batch is its own transaction and only touches messages whose words are still there, so
a run stopped anywhere (a crash, a lost lease) loses nothing it should keep and the next run
goes on where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from citewall.storage import audit
from citewall.storage.content import CONTENT_COLUMNS, holding_words, remove_content
from citewall.storage.failures import storage_errors
from citewall.storage.models import Conversation

#: Conversations per batch (one transaction each).
BATCH = 200
#: The lease name of the one runner across replicas (``storage.leases``).
LEASE = "retention"


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """What to keep: conversations' words for ``days`` (None: forever), audit lines for
    ``audit_days`` (None: forever)."""

    days: int | None = None
    audit_days: int | None = None
    batch: int = BATCH
    #: Assistant replies that are not a member's words and stay (small talk).
    canned_replies: Collection[str] = ()


@dataclass(slots=True)
class RetentionReport:
    """What one run removed."""

    conversations: int = 0
    batches: int = 0
    removed: dict[str, int] = field(default_factory=lambda: {c.name: 0 for c in CONTENT_COLUMNS})
    audit_lines: int = 0
    #: False when ``keep_going`` stopped it before the end (the next run goes on).
    finished: bool = True


def expired_conversations(session: Session, updated_before: datetime, limit: int) -> list[str]:
    """Up to ``limit`` conversations not updated since ``updated_before`` that still hold
    words in one of the content columns."""
    with storage_errors(session, "finding conversations past retention"):
        rows = session.scalars(
            select(Conversation.id)
            .where(
                Conversation.updated_at < updated_before,
                holding_words(session.get_bind().dialect.name),
            )
            .order_by(Conversation.updated_at, Conversation.id)
            .limit(limit)
        )
        ids = [str(i) for i in rows]
        session.commit()  # end the read transaction before the batch takes the write lock
    return ids


def run_retention(
    sessions: sessionmaker[Session],
    policy: RetentionPolicy,
    *,
    now: datetime,
    keep_going: Callable[[], bool] = lambda: True,
    actor: str = "retention",
    via: audit.Via = "system",
) -> RetentionReport:
    """Remove the words past ``policy.days`` batch by batch, then trim the audit log past
    ``policy.audit_days``. ``keep_going`` is asked before each batch (a runner renews its
    lease there); False stops the run with what it did so far. A run that removed or trimmed
    anything is an audit line naming ``actor`` (the schedule, or a command on the host)."""
    report = RetentionReport()
    if policy.days is not None:
        cutoff = now - timedelta(days=policy.days)
        while True:
            if not keep_going():
                report.finished = False
                break
            with sessions() as session:
                ids = expired_conversations(session, cutoff, policy.batch)
                if not ids:
                    break
                with storage_errors(session, "removing conversations' words", catch_all=True):
                    removed = remove_content(
                        session,
                        ids,
                        now=now,
                        canned_replies=policy.canned_replies,
                        updated_before=cutoff,
                    )
            report.batches += 1
            report.conversations += len(ids)
            for name, n in removed.items():
                report.removed[name] += n
    if policy.audit_days is not None:
        with sessions() as session:
            report.audit_lines = audit.trim(session, now - timedelta(days=policy.audit_days))
    if report.conversations or report.audit_lines:
        days = policy.days if policy.days is not None else policy.audit_days
        cutoff = now - timedelta(days=days or 0)
        with sessions() as session:
            audit.append(
                session,
                audit.AuditEvent(
                    actor=actor,
                    actor_user_id=None,
                    via=via,
                    action="retention",
                    target=f"conversations-before:{cutoff.date().isoformat()}",
                    detail={
                        "conversations": report.conversations,
                        "removed": report.removed,
                        "audit_lines_trimmed": report.audit_lines,
                    },
                ),
                now=now,
            )
    return report
