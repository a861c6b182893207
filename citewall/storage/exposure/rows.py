"""Exposure rows: what internal knowledge reached a member, written with the turn
(docs/distillation.md).

The exposure budget counts them with the turns' reservations (``exposure.reservations``); the
admin report over them is ``exposure.report``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from citewall.storage.failures import storage_errors
from citewall.storage.models import Conversation, Exposure, Message


@dataclass(frozen=True, slots=True)
class ExposureRecord:
    """One internal card in one answer: cited, and what of its text the prose repeated."""

    card_id: str
    cited: bool
    #: Keys (``citations.verbatim.sentence_key``) of the card's sentences the prose repeats.
    sentences: tuple[str, ...]
    #: Counted sentences the card has.
    card_sentences: int
    #: The longest run of words the prose shares with the card.
    longest_span: int


def exposure_rows(
    records: Sequence[ExposureRecord],
    *,
    user_id: int,
    message_id: str,
    conversation_id: str,
    now: datetime,
) -> list[Exposure]:
    """The rows ``save_turn`` adds for an assistant message."""
    return [
        Exposure(
            user_id=user_id,
            message_id=message_id,
            conversation_id=conversation_id,
            card_id=r.card_id,
            cited=r.cited,
            sentences=sorted(set(r.sentences)),
            card_sentences=r.card_sentences,
            longest_span=r.longest_span,
            created_at=now,
        )
        for r in records
    ]


def restricted_since(session: Session, user_id: int, since: datetime) -> bool:
    """Has ``user_id`` had an answer restricted by the exposure budget at or after ``since``?"""
    with storage_errors(session, "reading the member's restricted answers"):
        found = session.scalar(
            select(Message.id)
            .join(Conversation, Conversation.id == Message.conversation_id)
            .where(
                Conversation.user_id == user_id,
                Message.restricted.is_not(None),
                Message.created_at >= since,
            )
            .limit(1)
        )
    return found is not None
