"""The admin overview's headline numbers for a time window: questions asked, answers that said
"not found", and answers the member rated "Not helpful". Counts come from SQL; rates are the
counts divided in Python (``rate``), so both databases give the same figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from citewall.storage.analytics import ROUND_DIGITS, as_utc, time_window
from citewall.storage.failures import storage_errors
from citewall.storage.models import Feedback, Message


@dataclass(frozen=True, slots=True)
class Headline:
    """What members asked in ``[since, until)`` and how it went."""

    #: Questions members asked (a regenerated answer asks nothing new).
    questions: int
    #: Answers given, regenerated ones included.
    answers: int
    #: Answers saying the knowledge base does not answer the question.
    not_found: int
    #: Answers the member rated "Not helpful" (rated in the window, whenever answered).
    rated_down: int


def rate(part: int, whole: int) -> float | None:
    """``part / whole`` rounded, None when there is nothing to divide.

    >>> rate(1, 4), rate(0, 0)
    (0.25, None)
    """
    return round(part / whole, ROUND_DIGITS) if whole else None


def headline(
    session: Session, *, since: datetime | None = None, until: datetime | None = None
) -> Headline:
    """The headline numbers of ``[since, until)`` (None: unbounded)."""
    since, until = as_utc(since), as_utc(until)
    window = time_window(Message.created_at, since, until)

    def messages(*conditions: ColumnElement[bool]) -> int:
        query = select(func.count(Message.id)).where(*window, *conditions)
        return int(session.scalar(query) or 0)

    with storage_errors(session, "counting the headline numbers"):
        questions = messages(Message.role == "user")
        answers = messages(Message.role == "assistant")
        not_found = messages(Message.role == "assistant", Message.answer_status == "not_found")
        down = select(func.count(Feedback.id)).where(
            Feedback.rating == "down", *time_window(Feedback.updated_at, since, until)
        )
        rated_down = int(session.scalar(down) or 0)
    return Headline(questions, answers, not_found, rated_down)
