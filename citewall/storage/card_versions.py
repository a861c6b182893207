"""The saved versions of the playbooks written in the admin pages (``card_versions``).

Every save is a new version, numbered from 1 per card without gaps (``next_version``); a
rollback is a new version holding an earlier one's fields. A version row is added in the same
transaction as the playbooks source's card list and the ``cards.change`` audit line
(``record_version``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from citewall.errors import ConflictError, NotFoundError
from citewall.kb.card import Card
from citewall.storage.audit import AuditEvent, entry_row
from citewall.storage.failures import storage_errors
from citewall.storage.models import CardVersion, KBSource


@dataclass(frozen=True, slots=True)
class PlaybookVersion:
    """One saved version: the card's fields, who saved it and when."""

    card_id: str
    version: int
    title: str
    body: str
    reply: str | None
    audiences: tuple[str, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    author: str = ""
    author_user_id: int | None = None
    created_at: datetime | None = None
    #: The version a rollback restored (None: written in the form).
    restored_from: int | None = None

    def card(self) -> Card:
        """The card this version describes (valid: it was validated when saved)."""
        return Card(
            id=self.card_id,
            title=self.title,
            body=self.body,
            reply=self.reply,
            audiences=self.audiences,
            metadata=dict(self.metadata),
        )


def next_version(existing: Iterable[int]) -> int:
    """The number of the next version after ``existing``: one more than the highest, 1 first.

    >>> next_version([]), next_version([1, 2, 3])
    (1, 4)
    """
    return max(existing, default=0) + 1


def _version(row: CardVersion) -> PlaybookVersion:
    return PlaybookVersion(
        card_id=row.card_id,
        version=row.version,
        title=row.title,
        body=row.body,
        reply=row.reply,
        audiences=tuple(row.audiences or ()),
        metadata=dict(row.meta or {}),
        author=row.author,
        author_user_id=row.author_user_id,
        created_at=row.created_at,
        restored_from=row.restored_from,
    )


def latest_number(session: Session, card_id: str) -> int | None:
    """The newest version number of ``card_id``, or None when it has no version."""
    query = select(func.max(CardVersion.version)).where(CardVersion.card_id == card_id)
    with storage_errors(session, f"reading the versions of {card_id!r}"):
        newest = session.scalar(query)
    return int(newest) if newest is not None else None


def versions(session: Session, card_id: str) -> list[PlaybookVersion]:
    """Every version of ``card_id``, newest first (empty: not a playbook)."""
    query = (
        select(CardVersion)
        .where(CardVersion.card_id == card_id)
        .order_by(CardVersion.version.desc())
    )
    with storage_errors(session, f"reading the versions of {card_id!r}"):
        return [_version(r) for r in session.scalars(query)]


def get_version(session: Session, card_id: str, version: int) -> PlaybookVersion:
    """One version; ``NotFoundError`` naming the versions there are."""
    query = select(CardVersion).where(
        CardVersion.card_id == card_id, CardVersion.version == version
    )
    with storage_errors(session, f"reading version {version} of {card_id!r}"):
        row = session.scalar(query)
    if row is None:
        newest = latest_number(session, card_id)
        have = f"it has versions 1 to {newest}" if newest else "it is not a playbook"
        raise NotFoundError(f"playbook {card_id!r} has no version {version}: {have}")
    return _version(row)


def latest_versions(
    session: Session, card_ids: Iterable[str] | None = None
) -> list[PlaybookVersion]:
    """The newest version of every playbook (or of those in ``card_ids``), by card id."""
    newest = (
        select(CardVersion.card_id, func.max(CardVersion.version).label("version"))
        .group_by(CardVersion.card_id)
        .subquery()
    )
    query = select(CardVersion).join(
        newest,
        (CardVersion.card_id == newest.c.card_id) & (CardVersion.version == newest.c.version),
    )
    if card_ids is not None:
        query = query.where(CardVersion.card_id.in_(sorted(set(card_ids))))
    with storage_errors(session, "reading the playbooks"):
        return [_version(r) for r in session.scalars(query.order_by(CardVersion.card_id))]


def record_version(
    session: Session,
    card: Card,
    *,
    number: int,
    author: str,
    author_user_id: int | None,
    now: datetime,
    source_id: int,
    restored_from: int | None,
    audit_event: AuditEvent,
) -> PlaybookVersion:
    """Add version ``number`` of ``card``, list the card in the playbooks source and append
    ``audit_event``, in one transaction. ``ConflictError`` when that number was taken (another
    save of the same playbook came first)."""
    row = CardVersion(
        card_id=card.id,
        version=number,
        title=card.title,
        body=card.body,
        reply=card.reply,
        audiences=list(card.audiences),
        meta=dict(card.metadata),
        author=author[:320],
        author_user_id=author_user_id,
        created_at=now,
        restored_from=restored_from,
    )
    with storage_errors(session, f"saving version {number} of {card.id!r}"):
        source = session.get(KBSource, source_id)
        if source is not None and card.id not in (source.card_ids or []):
            source.card_ids = sorted({*(source.card_ids or []), card.id})
        session.add(entry_row(audit_event, now))
        session.add(row)
        try:
            session.commit()
        except IntegrityError:
            session.rollback()
            raise ConflictError(
                f"version {number} of playbook {card.id!r} was saved by someone else a moment "
                "ago; reload it and save again"
            ) from None
        return _version(row)
