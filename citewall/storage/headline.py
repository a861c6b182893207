"""The admin overview's headline numbers for a time window: questions asked, answers that said
"not found", and answers the member rated "Not helpful". Counts come from SQL; rates are the
counts divided in Python (``rate``), so both databases give the same figures.

Small talk ("hi", "thanks") asks nothing: its replies are stored with the ``small_talk`` status,
and the headline counts them apart (``small_talk``), out of the questions, the answers and the
"not found" count. Replies stored before that status existed are ``not_found`` answers; those
are told by their text, one of the replies the caller passes
(``chat.smalltalk.SMALL_TALK_REPLIES``).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from citewall.storage.analytics import ROUND_DIGITS, as_utc, time_window
from citewall.storage.failures import storage_errors
from citewall.storage.models import Feedback, Message


@dataclass(frozen=True, slots=True)
class Headline:
    """What members asked in ``[since, until)`` and how it went."""

    #: Questions members asked (a regenerated answer asks nothing new; small talk is none).
    questions: int
    #: Answers to those questions, regenerated ones included (small-talk replies are not).
    answers: int
    #: Answers saying the knowledge base does not answer the question.
    not_found: int
    #: Answers the member rated "Not helpful" (rated in the window, whenever answered).
    rated_down: int
    #: Small talk ("hi", "thanks") the assistant replied to, regenerated replies included.
    small_talk: int = 0


def rate(part: int, whole: int) -> float | None:
    """``part / whole`` rounded, None when there is nothing to divide.

    >>> rate(1, 4), rate(0, 0)
    (0.25, None)
    """
    return round(part / whole, ROUND_DIGITS) if whole else None


def headline(
    session: Session,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    small_talk_replies: Collection[str] = (),
) -> Headline:
    """The headline numbers of ``[since, until)`` (None: unbounded). A ``small_talk`` answer is
    counted apart, and so is a ``not_found`` one stored before that status whose text is one of
    ``small_talk_replies``."""
    since, until = as_utc(since), as_utc(until)
    window = time_window(Message.created_at, since, until)

    def messages(*conditions: ColumnElement[bool]) -> int:
        query = select(func.count(Message.id)).where(*window, *conditions)
        return int(session.scalar(query) or 0)

    assistant = Message.role == "assistant"
    small_talk = or_(
        Message.answer_status == "small_talk",
        and_(Message.answer_status == "not_found", Message.content.in_(sorted(small_talk_replies))),
    )
    with storage_errors(session, "counting the headline numbers"):
        chatted = messages(assistant, small_talk)
        # Each small-talk message got one first reply (later ones are regenerated).
        chatted_first = messages(assistant, small_talk, Message.regenerated_from.is_(None))
        questions = messages(Message.role == "user") - chatted_first
        answers = messages(assistant) - chatted
        legacy_chatted = messages(assistant, small_talk, Message.answer_status == "not_found")
        not_found = messages(assistant, Message.answer_status == "not_found") - legacy_chatted
        down = select(func.count(Feedback.id)).where(
            Feedback.rating == "down", *time_window(Feedback.updated_at, since, until)
        )
        rated_down = int(session.scalar(down) or 0)
    return Headline(questions, answers, not_found, rated_down, small_talk=chatted)
