"""The card catalogue: what is in the KB, its content hash and the ingest run that wrote it.

Ingest compares ``card_hashes()`` with the hashes of the cards it read to decide what to
(re)index, then records the result with ``upsert_cards`` / ``delete_cards``. Write functions
commit unless ``commit=False`` (to join a caller's larger transaction).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, or_, select
from sqlalchemy.orm import Session

from citewall.kb.card import Card
from citewall.storage.audit import AuditEvent, entry_row
from citewall.storage.failures import storage_errors
from citewall.storage.matching import contains_text
from citewall.storage.models import CardRow
from citewall.storage.paging import check_page
from citewall.storage.types import utcnow

# Keeps IN (...) lists well below SQLite's bound-parameter limit.
_BATCH = 500


@dataclass(frozen=True, slots=True)
class UpsertCounts:
    """What ``upsert_cards`` did: new rows, changed rows, rows already identical."""

    inserted: int = 0
    updated: int = 0
    unchanged: int = 0


def _batches(ids: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(ids), _BATCH):
        yield ids[start : start + _BATCH]


def card_hashes(session: Session) -> dict[str, str]:
    """``{card id: content hash}`` for every card in the catalogue."""
    with storage_errors(session, "reading card hashes"):
        rows = session.execute(select(CardRow.id, CardRow.content_hash))
        return {card_id: content_hash for card_id, content_hash in rows}


def next_ingest_version(session: Session) -> int:
    """One more than the highest ``ingest_version`` stored (1 for an empty catalogue)."""
    with storage_errors(session, "reading the ingest version"):
        return int(session.scalar(select(func.max(CardRow.ingest_version))) or 0) + 1


def upsert_cards(
    session: Session, cards: Sequence[Card], ingest_version: int, *, commit: bool = True
) -> UpsertCounts:
    """Insert new cards and update changed ones (by ``content_hash``), tagging the written rows
    with ``ingest_version``. Identical cards are left alone (their version keeps saying when
    they last changed). A card id given twice: the last one wins."""
    latest = {card.id: card for card in cards}
    inserted = updated = unchanged = 0
    now = utcnow()
    with storage_errors(session, f"recording {len(latest)} cards"):
        existing: dict[str, CardRow] = {}
        for batch in _batches(list(latest)):
            existing.update(
                (row.id, row)
                for row in session.scalars(select(CardRow).where(CardRow.id.in_(batch)))
            )
        for card_id, card in latest.items():
            digest = card.content_hash()
            row = existing.get(card_id)
            if row is None:
                session.add(
                    CardRow(
                        id=card.id,
                        title=card.title,
                        body=card.body,
                        url=card.url,
                        license=card.license,
                        reply=card.reply,
                        audiences=list(card.audiences),
                        meta=dict(card.metadata),
                        content_hash=digest,
                        ingest_version=ingest_version,
                        is_external=card.is_external,
                        created_at=now,
                        updated_at=now,
                    )
                )
                inserted += 1
            elif row.content_hash == digest:
                unchanged += 1
            else:
                row.title = card.title
                row.body = card.body
                row.url = card.url
                row.license = card.license
                row.reply = card.reply
                row.audiences = list(card.audiences)
                row.meta = dict(card.metadata)
                row.content_hash = digest
                row.ingest_version = ingest_version
                row.is_external = card.is_external
                row.updated_at = now
                updated += 1
        session.flush()
        if commit:
            session.commit()
    return UpsertCounts(inserted=inserted, updated=updated, unchanged=unchanged)


def delete_cards(session: Session, ids: Iterable[str], *, commit: bool = True) -> int:
    """Remove cards from the catalogue; return how many existed. Their retrieval events stay."""
    unique = sorted(set(ids))
    removed = 0
    with storage_errors(session, f"deleting {len(unique)} cards"):
        for batch in _batches(unique):
            result = session.execute(delete(CardRow).where(CardRow.id.in_(batch)))
            removed += int(getattr(result, "rowcount", 0) or 0)
        if commit:
            session.commit()
    return removed


def disabled_ids(session: Session) -> set[str]:
    """The ids of the cards an admin disabled (kept in the catalogue, out of every index)."""
    with storage_errors(session, "reading the disabled cards"):
        return set(session.scalars(select(CardRow.id).where(CardRow.disabled_at.is_not(None))))


def set_disabled(
    session: Session, card_id: str, *, disabled: bool, audit_event: AuditEvent, now: datetime
) -> CardRow | None:
    """Mark ``card_id`` disabled (by the event's actor, at ``now``) or enabled again, with
    ``audit_event`` in the same transaction; the row, or None when there is no such card."""
    with storage_errors(session, f"changing card {card_id!r}"):
        row = session.get(CardRow, card_id)
        if row is None:
            return None
        row.disabled_at = now if disabled else None
        row.disabled_by = audit_event.actor[:320] if disabled else None
        session.add(entry_row(audit_event, now))
        session.commit()
        return row


def card_of(row: CardRow) -> Card:
    """The card a catalogue row holds (it was validated when it was ingested)."""
    return Card(
        id=row.id,
        title=row.title,
        body=row.body,
        url=row.url,
        license=row.license,
        reply=row.reply,
        audiences=tuple(row.audiences or ()),
        metadata=dict(row.meta or {}),
    )


def get_card(session: Session, card_id: str) -> CardRow | None:
    """The catalogue row of ``card_id``, or None."""
    with storage_errors(session, f"reading card {card_id!r}"):
        return session.get(CardRow, card_id)


def list_cards(
    session: Session,
    query: str | None = None,
    external: bool | None = None,
    limit: int = 50,
    offset: int = 0,
) -> tuple[list[CardRow], int]:
    """A page of cards by title (case-insensitive, then id: how an admin looks for one), and
    the total matching. ``query`` matches id, title or body
    (case-insensitive substring); ``external`` keeps only external (True) or internal (False)."""
    check_page(limit, offset)
    conditions = []
    if query:
        conditions.append(
            or_(
                contains_text(CardRow.id, query),
                contains_text(CardRow.title, query),
                contains_text(CardRow.body, query),
            )
        )
    if external is not None:
        conditions.append(CardRow.is_external.is_(external))
    with storage_errors(session, "listing cards"):
        total = int(
            session.scalar(select(func.count()).select_from(CardRow).where(*conditions)) or 0
        )
        rows = list(
            session.scalars(
                select(CardRow)
                .where(*conditions)
                .order_by(func.lower(CardRow.title), CardRow.id)
                .limit(limit)
                .offset(offset)
            )
        )
    return rows, total


def cards_with_id_prefix(session: Session, prefix: str) -> list[CardRow]:
    """Every card whose id starts with ``prefix`` (a crawled site's cards), by id."""
    with storage_errors(session, f"reading the cards under {prefix!r}"):
        query = select(CardRow).where(CardRow.id.startswith(prefix, autoescape=True))
        return list(session.scalars(query.order_by(CardRow.id)))


def catalogue_version(session: Session) -> tuple[int, int]:
    """A cheap fingerprint of the catalogue: the newest ingest version and the card count
    (every ingest that adds, changes or deletes a card changes one of them)."""
    with storage_errors(session, "reading the card catalogue's version"):
        newest, count = session.execute(
            select(func.coalesce(func.max(CardRow.ingest_version), 0), func.count())
        ).one()
        return int(newest), int(count)


def card_texts(session: Session) -> list[tuple[str, bool]]:
    """Every card's title and body as one text, with whether the card is external."""
    with storage_errors(session, "reading the card texts"):
        rows = session.execute(select(CardRow.title, CardRow.body, CardRow.is_external))
        return [(f"{title}\n{body}", bool(external)) for title, body, external in rows]


def every_card(session: Session) -> list[CardRow]:
    """The whole catalogue, by id (what an evaluation of the deployment's KB reads)."""
    with storage_errors(session, "reading the card catalogue"):
        return list(session.scalars(select(CardRow).order_by(CardRow.id)))


def card_audiences(session: Session, card_ids: Iterable[str]) -> dict[str, list[str]]:
    """card id -> its audiences now, for the ids still in the catalogue."""
    ids = sorted(set(card_ids))
    out: dict[str, list[str]] = {}
    with storage_errors(session, "reading card audiences"):
        for batch in _batches(ids):
            rows = session.execute(
                select(CardRow.id, CardRow.audiences).where(CardRow.id.in_(batch))
            )
            out.update((card_id, list(groups or [])) for card_id, groups in rows)
    return out
