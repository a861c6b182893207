"""Playbooks written in the admin pages, and cards disabled and enabled there.

A playbook is an internal card (no url) saved from a form. Each save goes through the one
card validation of every ingest (``loaders.validate_card``: the same fields, rules and
refusals as a card file; a ``## Tell the member`` section of the body is the reply, as in a
Markdown card) and the one ingest path (``pipeline.ingest_cards``: Chroma, the lexical index,
the sentence vectors, the calibration, the cards table, the shared artifacts), then becomes a
new version in ``card_versions`` with a ``cards.change`` audit line. Playbooks belong to the
registered source of kind ``playbooks``: no sync of another source, and no ``citewall ingest
--prune``, removes them; a sync of the playbooks source makes the KB match their newest
versions.

Disabling a card (any card) marks its catalogue row and removes its chunks from every index;
enabling indexes the row again. Every ingest keeps disabled cards out of the indexes, so a
sync of the card's source does not bring it back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from citewall.config import Settings
from citewall.errors import ConflictError, IngestError, NotFoundError, UserError
from citewall.ingest.documents.markdown_sections import take_reply
from citewall.ingest.loaders import validate_card
from citewall.ingest.pipeline import IngestReport, ingest_cards
from citewall.kb.card import Card
from citewall.retrieval.protocols import Embedder
from citewall.storage import card_versions, kb_sources
from citewall.storage import cards as card_store
from citewall.storage.audit import Actor
from citewall.storage.card_versions import PlaybookVersion
from citewall.storage.kb_sources import RegisteredSource
from citewall.storage.models import CardRow

SessionFactory = Callable[[], Any]
#: Where the playbooks source is registered (its ``location``): the admin pages.
PLAYBOOKS_LOCATION = "admin pages"
#: One write to the KB at a time in this process (two would race to publish the indexes): every
#: change made from the admin pages (playbooks, disabling, uploads) holds it.
KB_WRITES = threading.Lock()


class CardRefusedError(UserError):
    """The card was refused; ``problems`` names each field's problem (HTTP 422)."""

    def __init__(self, problems: list[IngestError]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(str(p) for p in problems) or "the card was refused")


@dataclass(frozen=True, slots=True)
class PlaybookFields:
    """What the form holds: a playbook's fields but its id."""

    title: str
    body: str
    reply: str | None = None
    audiences: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class KBWriter:
    """What every change needs: the settings, the database and the loaded embedder."""

    settings: Settings
    session_factory: SessionFactory
    embedder: Embedder

    def ingest(self, cards: list[Card]) -> IngestReport:
        return ingest_cards(
            cards,
            self.settings,
            embedder=self.embedder,
            session_factory=self.session_factory,
            progress=False,
            writes_playbooks=True,
        )


def playbook_card(card_id: str, fields: PlaybookFields) -> Card:
    """The card the form describes, validated as a card file's; ``CardRefusedError`` with one
    problem per field otherwise."""
    raw: dict[str, Any] = {
        "id": card_id,
        "title": fields.title,
        "body": fields.body,
        "audiences": list(fields.audiences),
        "metadata": dict(fields.metadata),
    }
    split = take_reply(fields.body)
    if split.line is not None:
        if fields.reply is not None:
            raise CardRefusedError(
                [
                    IngestError(
                        "the reply is given twice: in the reply field and as a 'Tell the "
                        "member' section of the body; keep one",
                        field="reply",
                    )
                ]
            )
        raw["body"], raw["reply"] = split.body, split.reply or ""
    elif fields.reply is not None:
        raw["reply"] = fields.reply
    card, problems = validate_card(raw, path="", line=None, lines={})
    if card is None:
        raise CardRefusedError(problems)
    return card


def playbooks_source(session_factory: SessionFactory, now: datetime) -> RegisteredSource:
    """The registered source playbooks belong to, registered on first use."""
    with session_factory() as session:
        return kb_sources.ensure_source(session, "playbooks", PLAYBOOKS_LOCATION, now=now)


def save_playbook(
    writer: KBWriter,
    card: Card,
    *,
    author: Actor,
    now: datetime,
    base_version: int | None,
    restored_from: int | None = None,
) -> PlaybookVersion:
    """Save ``card`` as its playbook's next version (``base_version`` None: a new playbook;
    else the version the edit began from, which must still be the newest) and serve it.

    ``ConflictError``: the id is taken, or someone saved since ``base_version``;
    ``NotFoundError``: no such playbook to edit.
    """
    with KB_WRITES:
        with writer.session_factory() as session:
            latest = card_versions.latest_number(session, card.id)
            row = card_store.get_card(session, card.id)
        if base_version is None:
            if latest is not None:
                raise ConflictError(
                    f"playbook {card.id!r} exists already (version {latest}); edit it instead"
                )
            if row is not None:
                raise ConflictError(
                    f"card id {card.id!r} is taken by a card of another source; choose another id"
                )
        elif latest is None:
            raise NotFoundError(
                f"no playbook {card.id!r}: only playbooks written in the admin pages are "
                "edited here (other cards are edited at their source)"
            )
        elif base_version != latest:
            raise ConflictError(
                f"playbook {card.id!r} is at version {latest}, and this edit began from "
                f"version {base_version}: reload it, then save again"
            )
        source = playbooks_source(writer.session_factory, now)
        report = writer.ingest([card])
        number = card_versions.next_version([latest or 0])
        detail: dict[str, Any] = {
            "playbook_version": number,
            "added": report.added,
            "updated": report.updated,
        }
        if restored_from is not None:
            detail["restored_from"] = restored_from
        with writer.session_factory() as session:
            return card_versions.record_version(
                session,
                card,
                number=number,
                author=author.name,
                author_user_id=author.user_id,
                now=now,
                source_id=source.id,
                restored_from=restored_from,
                audit_event=author.event("cards.change", f"card:{card.id}", detail),
            )


def rollback_playbook(
    writer: KBWriter, card_id: str, version: int, *, author: Actor, now: datetime
) -> PlaybookVersion:
    """Save version ``version``'s fields as the playbook's next version."""
    with writer.session_factory() as session:
        earlier = card_versions.get_version(session, card_id, version)
        latest = card_versions.latest_number(session, card_id)
    return save_playbook(
        writer, earlier.card(), author=author, now=now, base_version=latest, restored_from=version
    )


def set_card_enabled(
    writer: KBWriter, card_id: str, enabled: bool, *, author: Actor, now: datetime
) -> CardRow:
    """Disable a card (kept in the catalogue, removed from every index) or enable it again
    (indexed from its row). ``NotFoundError`` for no such card; ``ConflictError`` when it is in
    that state already."""
    state = "enabled" if enabled else "disabled"
    with KB_WRITES:
        with writer.session_factory() as session:
            row = card_store.get_card(session, card_id)
            if row is None:
                raise NotFoundError(f"card {card_id[:200]!r} not found")
            if (row.disabled_at is None) == enabled:
                raise ConflictError(f"card {card_id!r} is {state} already")
            card = card_store.card_of(row)
            event = author.event("cards.change", f"card:{card_id}", {state: True})
            changed = card_store.set_disabled(
                session, card_id, disabled=not enabled, audit_event=event, now=now
            )
            if changed is None:  # deleted between the two reads
                raise NotFoundError(f"card {card_id[:200]!r} not found")
        # Disabled: the next ingest removes its chunks (this one). Enabled: indexed again.
        writer.ingest([card] if enabled else [])
        with writer.session_factory() as session:
            final = card_store.get_card(session, card_id)
        if final is None:
            raise NotFoundError(f"card {card_id[:200]!r} was removed meanwhile")
        return final


def playbook_cards(session_factory: SessionFactory, card_ids: list[str]) -> list[Card]:
    """The newest version of each of ``card_ids`` that is a playbook (what a sync serves)."""
    with session_factory() as session:
        return [v.card() for v in card_versions.latest_versions(session, card_ids)]
