"""The admin feedback report: thumbs up and down over a window, per cited card, and the
worst-rated answers with their question and conversation.

Ratings count in the window by when they were given (``feedback.updated_at``: a changed rating
counts once, as it stands). Hidden conversations count: deleting hides a conversation from its
member, not from analytics.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import case, distinct, func, literal, select
from sqlalchemy.orm import Session, aliased

from citewall.storage.analytics import as_utc, helpful_rate, time_window
from citewall.storage.dialect import cited_sources
from citewall.storage.failures import storage_errors
from citewall.storage.models import CardRow, Feedback, Message, Rating, User
from citewall.storage.paging import check_page
from citewall.storage.questions import asks
from citewall.storage.removal import Removal, removed_by

#: The most cards and answers one report lists.
REPORT_MAX_LIMIT = 500


@dataclass(frozen=True, slots=True)
class CardFeedback:
    """Thumbs on the answers that cited one card."""

    card_id: str
    #: The catalogue title (the cited source's, for a card no longer in the catalogue).
    title: str
    external: bool
    up: int
    down: int
    helpful_rate: float | None


@dataclass(frozen=True, slots=True)
class RatedAnswer:
    """One rating with the answer it rates (content as stored, markers kept) and its question."""

    message_id: str
    conversation_id: str
    user_id: int
    user_name: str
    question: str | None
    answer: str
    rating: Rating
    comment: str | None
    created_at: datetime
    updated_at: datetime
    #: Why the question and answer have no words (None: they are stored).
    removed: Removal | None = None


@dataclass(frozen=True, slots=True)
class FeedbackSummary:
    up: int
    down: int
    helpful_rate: float | None
    #: Most thumbs-down first.
    cards: list[CardFeedback]
    #: Thumbs-down first, then newest first.
    worst: list[RatedAnswer]


def feedback_report(
    session: Session,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int = 20,
) -> FeedbackSummary:
    """Ratings given in ``[since, until)`` (UTC when naive): totals, up to ``limit`` cards (most
    thumbs-down, then fewest thumbs-up, then card id) and up to ``limit`` rated answers."""
    check_page(limit, 0, max_limit=REPORT_MAX_LIMIT)
    since, until = as_utc(since), as_utc(until)
    window = time_window(Feedback.updated_at, since, until)
    with storage_errors(session, "reading the feedback report"):
        totals = dict(
            session.execute(
                select(Feedback.rating, func.count()).where(*window).group_by(Feedback.rating)
            ).all()
        )
        cards = _cards(session, window, limit)
        worst = _worst(session, window, limit)
    up, down = int(totals.get("up", 0)), int(totals.get("down", 0))
    return FeedbackSummary(up, down, helpful_rate(up, down), cards, worst)


def _cards(session: Session, window: list[Any], limit: int) -> list[CardFeedback]:
    src = cited_sources(session.get_bind().dialect.name)
    up = func.count(distinct(case((Feedback.rating == "up", Feedback.id))))
    down = func.count(distinct(case((Feedback.rating == "down", Feedback.id))))
    has_url = func.max(
        case((func.coalesce(src.c.source_url, literal("")) != literal(""), 1), else_=0)
    )
    query = (
        select(
            src.c.card_id,
            up.label("up"),
            down.label("down"),
            func.max(src.c.title).label("source_title"),
            has_url.label("source_external"),
            func.max(CardRow.title).label("catalogue_title"),
            func.max(case((CardRow.is_external, 1), else_=0)).label("catalogue_external"),
            func.count(CardRow.id).label("in_catalogue"),
        )
        .select_from(src)
        .join(Feedback, Feedback.message_id == src.c.message_id)
        .outerjoin(CardRow, CardRow.id == src.c.card_id)
        .where(src.c.card_id.is_not(None), *window)
        .group_by(src.c.card_id)
        .order_by(down.desc(), up.asc(), src.c.card_id)
        .limit(limit)
    )
    rows = session.execute(query).all()
    return [
        CardFeedback(
            card_id=str(r.card_id),
            title=str(r.catalogue_title or r.source_title or r.card_id),
            external=bool(r.catalogue_external if r.in_catalogue else r.source_external),
            up=int(r.up),
            down=int(r.down),
            helpful_rate=helpful_rate(int(r.up), int(r.down)),
        )
        for r in rows
    ]


def _worst(session: Session, window: list[Any], limit: int) -> list[RatedAnswer]:
    asked = aliased(Message)
    query = (
        select(
            Feedback,
            Message.conversation_id,
            Message.content,
            asked.content,
            User.name,
            Message.content_removed_at,
            User.issuer,
        )
        .join(Message, Message.id == Feedback.message_id)
        .join(User, User.id == Feedback.user_id)
        .outerjoin(asked, asks(asked, Message))
        .where(*window)
        .order_by(
            case((Feedback.rating == "down", 0), else_=1),
            Feedback.updated_at.desc(),
            Feedback.id.desc(),
        )
        .limit(limit)
    )
    return [
        RatedAnswer(
            message_id=str(f.message_id),
            conversation_id=str(conversation_id),
            user_id=f.user_id,
            user_name=name,
            question=question,
            answer=answer,
            rating=f.rating,
            comment=f.comment,
            created_at=f.created_at,
            updated_at=f.updated_at,
            removed=removed_by(removed_at, issuer),
        )
        for f, conversation_id, answer, question, name, removed_at, issuer in session.execute(
            query
        ).all()
    ]
