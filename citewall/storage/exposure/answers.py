"""The answers behind one member's exposure: each answer that drew on internal cards (or was
limited by the exposure budget), with the question asked and, per card, what reached the member.

One page at a time, newest first, for the admin drill-down (``exposure.report.member_exposure``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session, aliased

from citewall.storage.analytics import time_window
from citewall.storage.failures import storage_errors
from citewall.storage.models import CardRow, Conversation, Exposure, Message
from citewall.storage.paging import check_page
from citewall.storage.questions import asks


@dataclass(frozen=True, slots=True)
class ExposedCard:
    """One internal card in one answer."""

    card_id: str
    #: The card's catalogue title (None once the card left the catalogue).
    title: str | None
    cited: bool
    verbatim_sentences: int
    #: Sentences the card had that could count.
    card_sentences: int
    longest_span: int


@dataclass(frozen=True, slots=True)
class ExposureTurn:
    """One assistant answer with exposure, or one restricted by the budget."""

    message_id: str
    conversation_id: str
    created_at: datetime
    #: The member's message the answer replied to (None if it is missing).
    question: str | None
    restricted: str | None
    cards: list[ExposedCard]


def _turn_filter(user_id: int, since: datetime | None, until: datetime | None) -> list[Any]:
    exposed = select(Exposure.message_id).where(Exposure.user_id == user_id)
    return [
        Message.role == "assistant",
        Conversation.user_id == user_id,
        or_(Message.id.in_(exposed), Message.restricted.is_not(None)),
        *time_window(Message.created_at, since, until),
    ]


def exposure_turns(
    session: Session,
    user_id: int,
    since: datetime | None,
    until: datetime | None,
    limit: int,
    offset: int,
) -> tuple[list[ExposureTurn], int]:
    """One page of ``user_id``'s answers over ``[since, until)`` that drew on internal cards or
    were restricted by the budget, newest first, and how many there are in all."""
    check_page(limit, offset)
    conditions = _turn_filter(user_id, since, until)
    asked = aliased(Message)
    page = (
        select(
            Message.id,
            Message.conversation_id,
            Message.created_at,
            Message.restricted,
            asked.content,
        )
        .join(Conversation, Conversation.id == Message.conversation_id)
        .outerjoin(asked, asks(asked, Message))
        .where(*conditions)
        .order_by(Message.created_at.desc(), Message.id.desc())
        .limit(limit)
        .offset(offset)
    )
    count = (
        select(func.count())
        .select_from(Message)
        .join(Conversation, Conversation.id == Message.conversation_id)
        .where(*conditions)
    )
    with storage_errors(session, "listing exposure turns"):
        rows = session.execute(page).all()
        total = int(session.scalar(count) or 0)
        cards = _cards_of(session, [str(r[0]) for r in rows])
    turns = [
        ExposureTurn(
            message_id=str(r[0]),
            conversation_id=str(r[1]),
            created_at=r[2],
            question=None if r[4] is None else str(r[4]),
            restricted=r[3],
            cards=cards.get(str(r[0]), []),
        )
        for r in rows
    ]
    return turns, total


def _cards_of(session: Session, message_ids: list[str]) -> dict[str, list[ExposedCard]]:
    """The exposure rows of ``message_ids``, per message: most verbatim first, then longest
    span, then card id."""
    if not message_ids:
        return {}
    rows = list(session.scalars(select(Exposure).where(Exposure.message_id.in_(message_ids))))
    ids = sorted({r.card_id for r in rows})
    catalogue = select(CardRow.id, CardRow.title).where(CardRow.id.in_(ids))
    titles = {card_id: title for card_id, title in session.execute(catalogue)}
    out: dict[str, list[ExposedCard]] = {}
    for r in rows:
        sentences = r.sentences if isinstance(r.sentences, list) else []
        out.setdefault(r.message_id, []).append(
            ExposedCard(
                card_id=r.card_id,
                title=titles.get(r.card_id),
                cited=bool(r.cited),
                verbatim_sentences=len({s for s in sentences if isinstance(s, str)}),
                card_sentences=int(r.card_sentences or 0),
                longest_span=int(r.longest_span or 0),
            )
        )
    for cards in out.values():
        cards.sort(key=lambda c: (-c.verbatim_sentences, -c.longest_span, c.card_id))
    return out
