"""Members' words in storage, and removing them from some conversations (retention, erasure).

``CONTENT_COLUMNS`` is the one list of columns that hold what a member typed or was told:
questions and answers, conversation titles (made from the first question), feedback comments,
a request for a person (its message, and the payload the helpdesk is sent), the query each
retrieval event stored, the test questions admins saved from a conversation (a copy of its
question and the messages before it), and each cited source's ``span`` inside
``messages.sources`` (the answer's sentence that cited it: the answer's words, model text or
quoted card text). Everything else a turn writes stays: card ids, ranks, scores, paths,
cited flags, ratings, answer statuses, support, exposure rows, the rest of each source (the
knowledge base's own text: card id, title, URL, chunk). A table added later that holds
members' words adds its columns here, and retention and erasure remove them with the rest.

``remove_content`` does one batch in one transaction, so an interrupted run keeps every batch
it finished and redoes none: a message whose words are gone has ``content_removed_at`` set.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import ColumnElement, Select, and_, delete, not_, select, union, update
from sqlalchemy.orm import InstrumentedAttribute, Session

from citewall.storage.db import begin_write
from citewall.storage.dialect import spans_left
from citewall.storage.gaps import turn_coverage
from citewall.storage.models import (
    Conversation,
    EvalQuestion,
    Feedback,
    Handoff,
    Message,
    RetrievalEvent,
)

#: What a removed conversation title reads.
REMOVED_TITLE = "(removed)"


class ContentField(Protocol):
    """A place holding members' words: its name, where words are left, and removing them."""

    #: ``table.column`` (or ``table.column.key`` inside a JSON column), as receipts name it.
    @property
    def name(self) -> str: ...

    def holding_words(self, dialect: str) -> Select[Any]:
        """The ids of the conversations that still hold words here (what retention and
        erasure look for; a comment written after a run is found again)."""
        ...

    def remove(self, session: Session, ids: Sequence[str], canned_replies: Collection[str]) -> int:
        """Remove the words of conversations ``ids`` here (in the caller's transaction); how
        many values went. Afterwards ``holding_words`` finds none of ``ids`` here."""
        ...


@dataclass(frozen=True, slots=True)
class ContentColumn:
    """A column holding members' words: what it becomes, and which rows belong to some
    conversations."""

    #: ``table.column``, as receipts and reports name it.
    name: str
    column: InstrumentedAttribute[Any]
    #: What the removed value is ('' for NOT NULL text, None otherwise).
    blank: str | None
    rows_of: Callable[[Sequence[str]], ColumnElement[bool]]
    #: The ids of the conversations that still hold words in this column.
    holding: Callable[[], Select[Any]]

    def holding_words(self, dialect: str) -> Select[Any]:
        return self.holding()

    def remove(self, session: Session, ids: Sequence[str], canned_replies: Collection[str]) -> int:
        conditions = [self.rows_of(ids), _still_there(self)]
        kept = _kept(self, canned_replies)
        if kept is not None:
            conditions.append(not_(kept))
        statement = update(self.column.class_).where(*conditions)
        result = session.execute(statement.values({self.column.key: self.blank}))
        return int(getattr(result, "rowcount", 0) or 0)


@dataclass(frozen=True, slots=True)
class SourceSpans:
    """The ``span`` each stored source of an answer keeps (``messages.sources``, JSON): the
    answer's sentence that cited the card. The key goes from every source of the answers;
    card id, title, URL and the rest stay, so every rollup reads the sources as before."""

    name: str = "messages.sources.span"

    def holding_words(self, dialect: str) -> Select[Any]:
        # A conversation whose content is still there is found by messages.content; a span
        # left where it is gone (stored before spans were removed) is found here.
        return spans_left(dialect)

    def remove(self, session: Session, ids: Sequence[str], canned_replies: Collection[str]) -> int:
        rows = session.execute(
            select(Message.id, Message.sources).where(
                Message.conversation_id.in_(ids), Message.role == "assistant"
            )
        ).all()
        removed = 0
        for message_id, sources in rows:
            if not isinstance(sources, list):
                continue
            if not any(isinstance(s, dict) and "span" in s for s in sources):
                continue
            removed += sum(isinstance(s, dict) and s.get("span") is not None for s in sources)
            without = [
                {k: v for k, v in s.items() if k != "span"} if isinstance(s, dict) else s
                for s in sources
            ]
            session.execute(update(Message).where(Message.id == message_id).values(sources=without))
        return removed


@dataclass(frozen=True, slots=True)
class SavedTestQuestions:
    """The test questions admins saved from the conversations' answers ("Save as test
    question", ``eval_questions``): each is a copy of the member's question and the
    conversation before it, so it goes with the conversation's words (the row is deleted: a
    test question without its question is nothing). Export the questions file first to keep
    them past the retention window."""

    name: str = "eval_questions.question"

    def holding_words(self, dialect: str) -> Select[Any]:
        return select(Message.conversation_id).join(
            EvalQuestion, EvalQuestion.message_id == Message.id
        )

    def remove(self, session: Session, ids: Sequence[str], canned_replies: Collection[str]) -> int:
        answers = select(Message.id).where(Message.conversation_id.in_(ids))
        result = session.execute(delete(EvalQuestion).where(EvalQuestion.message_id.in_(answers)))
        return int(getattr(result, "rowcount", 0) or 0)


def _feedback_of(ids: Sequence[str]) -> ColumnElement[bool]:
    return Feedback.message_id.in_(select(Message.id).where(Message.conversation_id.in_(ids)))


CONTENT_COLUMNS: tuple[ContentField, ...] = (
    ContentColumn(
        "messages.content",
        Message.content,
        "",
        Message.conversation_id.in_,
        lambda: select(Message.conversation_id).where(Message.content_removed_at.is_(None)),
    ),
    ContentColumn(
        "conversations.title",
        Conversation.title,
        REMOVED_TITLE,
        Conversation.id.in_,
        lambda: select(Conversation.id).where(Conversation.title != REMOVED_TITLE),
    ),
    ContentColumn(
        "feedback.comment",
        Feedback.comment,
        None,
        _feedback_of,
        lambda: (
            select(Message.conversation_id)
            .join(Feedback, Feedback.message_id == Message.id)
            .where(Feedback.comment.is_not(None))
        ),
    ),
    ContentColumn(
        "handoffs.message",
        Handoff.message,
        None,
        Handoff.conversation_id.in_,
        lambda: select(Handoff.conversation_id).where(Handoff.message.is_not(None)),
    ),
    # What the helpdesk was sent: the conversation's questions and answers, the member's name.
    ContentColumn(
        "handoffs.payload",
        Handoff.payload,
        None,
        Handoff.conversation_id.in_,
        lambda: select(Handoff.conversation_id).where(Handoff.payload.is_not(None)),
    ),
    ContentColumn(
        "retrieval_events.query",
        RetrievalEvent.query,
        None,
        RetrievalEvent.conversation_id.in_,
        lambda: select(RetrievalEvent.conversation_id).where(RetrievalEvent.query.is_not(None)),
    ),
    SourceSpans(),
    SavedTestQuestions(),
)


def holding_words(dialect: str) -> ColumnElement[bool]:
    """Condition on ``Conversation``: it still holds words in one of ``CONTENT_COLUMNS``
    (``dialect``: the database's, ``session.get_bind().dialect.name``)."""
    return Conversation.id.in_(union(*(entry.holding_words(dialect) for entry in CONTENT_COLUMNS)))


def _still_there(entry: ContentColumn) -> ColumnElement[bool]:
    if entry.blank is None:
        return entry.column.is_not(None)
    return entry.column != entry.blank


def _kept(entry: ContentColumn, canned_replies: Collection[str]) -> ColumnElement[bool] | None:
    """Rows of ``entry`` that keep their text: the assistant's canned small-talk replies (the
    headline tells small talk by them; no member wrote them)."""
    if entry.column is not Message.content or not canned_replies:
        return None
    return and_(Message.role == "assistant", Message.content.in_(sorted(canned_replies)))


def remove_content(
    session: Session,
    conversation_ids: Sequence[str],
    *,
    now: datetime,
    canned_replies: Collection[str] = (),
    updated_before: datetime | None = None,
    commit: bool = True,
) -> dict[str, int]:
    """Remove the words of ``conversation_ids`` in ONE transaction (committed unless
    ``commit`` is False: the caller writes more in it); how many values of each
    ``CONTENT_COLUMNS`` column went.

    The conversations are locked first (as a turn locks its conversation), and with
    ``updated_before`` only those still not updated since are touched: a member who came back
    to one meanwhile keeps it. Before the words go, each answer's knowledge-gaps coverage is
    frozen on it (``messages.coverage``), so the report counts it as before.
    """
    begin_write(session)
    locked = select(Conversation.id).where(Conversation.id.in_(conversation_ids))
    if updated_before is not None:
        locked = locked.where(Conversation.updated_at < updated_before)
    ids = [str(i) for i in session.scalars(locked.with_for_update())]
    removed = {entry.name: 0 for entry in CONTENT_COLUMNS}
    if not ids:
        if commit:
            session.commit()
        return removed
    pending = list(
        session.scalars(
            select(Message.id).where(
                Message.conversation_id.in_(ids),
                Message.role == "assistant",
                Message.content_removed_at.is_(None),
                Message.support.is_not(None),
            )
        )
    )
    for message_id, covered in turn_coverage(session, [str(m) for m in pending]).items():
        session.execute(update(Message).where(Message.id == message_id).values(coverage=covered))
    for entry in CONTENT_COLUMNS:
        removed[entry.name] = entry.remove(session, ids, canned_replies)
    session.execute(
        update(Message)
        .where(Message.conversation_id.in_(ids), Message.content_removed_at.is_(None))
        .values(content_removed_at=now)
    )
    if commit:
        session.commit()
    return removed
