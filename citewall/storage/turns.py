"""Saving one turn atomically: the question, the answer and its retrieval events.

A turn is the user's message, the assistant's message (content with ``[n]`` markers, the FULL
sources list, hybrid_path, timings) and one retrieval event per retrieved card. All of it is
written in one transaction: a reader never sees an answer without its events, or the reverse.
A regenerated answer is a turn without a new question (``TurnRecord.regenerated_from``).

``save_turn`` takes one frozen ``TurnRecord``: where the turn goes (conversation, question, the
conversation it creates or the title it gives) and the ``AnswerRecord`` the pipeline produced,
stored as it is (its sources typed until the column stores them as JSON).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from citewall.errors import ConflictError
from citewall.retrieval.types import HYBRID_PATHS, HybridPath, RetrievalRecord, finite
from citewall.storage.conversations import not_found, short_title
from citewall.storage.db import begin_write
from citewall.storage.exposure.reservations import settle_reservation
from citewall.storage.exposure.rows import ExposureRecord, exposure_rows
from citewall.storage.failures import storage_errors
from citewall.storage.models import (
    ANSWER_STATUSES,
    RESTRICTIONS,
    AnswerStatus,
    Conversation,
    Message,
    Restriction,
    RetrievalEvent,
    new_uuid,
)
from citewall.storage.sources import StoredSource, dump_sources
from citewall.storage.types import utcnow


@dataclass(frozen=True, slots=True)
class NewConversation:
    """A conversation ``save_turn`` creates with its first turn (same transaction)."""

    user_id: int
    title: str


@dataclass(frozen=True, slots=True)
class Retitle:
    """A title ``save_turn`` gives the conversation, if it is still titled ``replaces`` (a
    member who renamed it meanwhile keeps their own)."""

    replaces: str
    title: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerRecord:
    """An assistant answer as it is stored: the message's columns, its retrieval events and its
    exposure rows. The pipeline's ``chat.pipeline.Answer`` is one (with what serving it needs)."""

    #: The answer as stored: ``[n]`` markers kept.
    content: str
    #: The FULL sources (internal cards included: the serve boundary filters them later).
    sources: tuple[StoredSource, ...] = ()
    hybrid_path: HybridPath | None = None
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    #: The name of the generator that wrote it.
    generator_name: str | None = None
    dropped_markers: int = 0
    #: One per retrieved card (none for small talk).
    events: tuple[RetrievalRecord, ...] = ()
    answer_status: AnswerStatus = "answered"
    #: The answerability signal the status was decided on (the best dense similarity).
    support: float | None = None
    #: The text retrieval ran with (None when nothing was retrieved, e.g. for small talk).
    retrieval_query: str | None = None
    #: The internal cards the answer cited or copied from.
    exposures: tuple[ExposureRecord, ...] = ()
    #: Why the answer was limited to external cards (the member's exposure budget), or None.
    restricted: Restriction | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnRecord:
    """One turn as ``save_turn`` stores it."""

    conversation_id: str
    #: The question (cleaned); for a regeneration, the stored question (not written again).
    question: str
    answer: AnswerRecord
    #: The conversation this first turn creates (same transaction), or None.
    new_conversation: NewConversation | None = None
    #: The title this turn gives an existing conversation, or None.
    retitle: Retitle | None = None
    #: The answer this one replaces (a regeneration), or None.
    regenerated_from: str | None = None
    #: The member the conversation must belong to (None: any).
    owner: int | None = None
    #: The exposure reservation the save settles (``exposure.reservations``), or None.
    settles: str | None = None


def latest_turn(session: Session, conversation_id: str) -> tuple[Message, Message | None]:
    """The conversation's last question and its latest answer (None if it has none yet).

    ``ConflictError`` when the conversation has no question at all.
    """
    with storage_errors(session, "reading the last question"):
        question = session.scalar(
            select(Message)
            .where(Message.conversation_id == conversation_id, Message.role == "user")
            .order_by(Message.seq.desc())
            .limit(1)
        )
        if question is None:
            raise ConflictError("this conversation has no question to answer again")
        answer = session.scalar(
            select(Message)
            .where(
                Message.conversation_id == conversation_id,
                Message.role == "assistant",
                Message.seq > question.seq,
            )
            .order_by(Message.seq.desc())
            .limit(1)
        )
    return question, answer


def _event_row(
    record: RetrievalRecord,
    *,
    message_id: str,
    conversation_id: str,
    query: str | None,
    now: datetime,
) -> RetrievalEvent:
    # ValueErrors become "saving the turn failed and was rolled back: ..." in save_turn.
    values = dataclasses.asdict(record)
    for name, value in values.items():
        # SQLite would store NaN as NULL and PostgreSQL as NaN: refuse it on both.
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"retrieval event {name} is {value}, not a finite number")
    return RetrievalEvent(
        message_id=message_id,
        conversation_id=conversation_id,
        query=query,
        created_at=now,
        **values,
    )


def _check_answer(answer: AnswerRecord) -> None:
    """Refuse what one of the two databases would store differently, or what no reader knows.

    ValueErrors here become "saving the turn failed and was rolled back: ..." in save_turn.
    Text is not checked: the column types store any string (``storage.types``).
    """
    if answer.hybrid_path is not None and answer.hybrid_path not in HYBRID_PATHS:
        raise ValueError(
            f"unknown hybrid_path {answer.hybrid_path!r}; expected one of "
            f"{', '.join(HYBRID_PATHS)} or None"
        )
    if answer.answer_status not in ANSWER_STATUSES:
        raise ValueError(f"unknown answer_status {answer.answer_status!r}")
    if answer.restricted is not None and answer.restricted not in RESTRICTIONS:
        raise ValueError(f"unknown restriction {answer.restricted!r}")


def save_turn(
    session: Session, turn: TurnRecord, *, now: datetime | None = None
) -> tuple[Message, Message]:
    """Write the user message, the assistant message and its retrieval events in ONE
    transaction; return ``(user_message, assistant_message)``.

    With ``turn.new_conversation``, the conversation ``turn.conversation_id`` is created in the
    same transaction (its title shortened to 200 characters, ``short_title``), so a failed
    first turn leaves no empty conversation behind. ``turn.retitle`` names an existing
    conversation in the same transaction.

    The answer's sources are stored exactly as given (the full list, internal cards included),
    but for characters no database can hold (``text.cleaning.encodable``). ``answer_status``,
    ``support`` and ``restricted`` go on the assistant message, ``retrieval_query`` (the text
    retrieval ran with) on each retrieval event, the exposures (internal cards the answer cited
    or copied from) on rows of the conversation's owner; ``turn.settles`` names the turn's
    exposure reservation, deleted in the same transaction (``exposure.reservations``); ``now``
    (default: the current time) stamps every row. Any failure rolls everything back and raises
    ``StorageError`` (``NotFoundError`` if the conversation does not exist, or ``turn.owner``
    is given and does not own it).

    A conversation its member deleted (hid) meanwhile still takes the turn, and stays hidden:
    what the member was shown is recorded whatever happened to the conversation.

    With ``turn.regenerated_from`` (the conversation's latest answer) the turn answers that
    answer's question again: no user message is written, the new answer records the one it
    replaces, and the stored question is returned as the first message. ``ConflictError`` when
    that answer is no longer the latest (another turn came first).
    """
    answer = turn.answer
    conversation_id = turn.conversation_id
    with storage_errors(session, "saving the turn", catch_all=True):
        _check_answer(answer)
        now = now if now is not None else utcnow()
        begin_write(session)
        if turn.new_conversation is not None:
            session.add(
                Conversation(
                    id=conversation_id,
                    user_id=turn.new_conversation.user_id,
                    title=short_title(turn.new_conversation.title),
                    created_at=now,
                    updated_at=now,
                )
            )
            session.flush()
        # Row lock on PostgreSQL: concurrent turns of one conversation take seq numbers in turn.
        conversation = session.scalar(
            select(Conversation).where(Conversation.id == conversation_id).with_for_update()
        )
        if conversation is None or turn.owner not in (None, conversation.user_id):
            raise not_found(conversation_id)
        if turn.retitle is not None and conversation.title == turn.retitle.replaces:
            conversation.title = short_title(turn.retitle.title)
        if turn.regenerated_from is None:
            last_seq = session.scalar(
                select(func.max(Message.seq)).where(Message.conversation_id == conversation_id)
            )
            seq = int(last_seq or 0) + 1
            user_message = Message(
                id=new_uuid(),
                conversation_id=conversation_id,
                seq=seq,
                role="user",
                content=turn.question,
                sources=[],
                timings={},
                created_at=now,
            )
            session.add(user_message)
        else:
            user_message, replaced = latest_turn(session, conversation_id)
            if replaced is None or replaced.id != turn.regenerated_from:
                raise ConflictError(
                    "the conversation moved on while the answer was regenerated; "
                    "nothing was stored, regenerate again"
                )
            seq = replaced.seq
        assistant = Message(
            id=new_uuid(),
            conversation_id=conversation_id,
            seq=seq + 1,
            role="assistant",
            content=answer.content,
            sources=dump_sources(answer.sources),
            hybrid_path=answer.hybrid_path,
            timings=dict(answer.timings_ms),
            generator=answer.generator_name,
            dropped_markers=answer.dropped_markers,
            answer_status=answer.answer_status,
            support=finite(answer.support),
            restricted=answer.restricted,
            regenerated_from=turn.regenerated_from,
            created_at=now,
        )
        session.add(assistant)
        session.flush()  # messages before the events that reference them
        session.add_all(
            _event_row(
                e,
                message_id=assistant.id,
                conversation_id=conversation_id,
                query=answer.retrieval_query,
                now=now,
            )
            for e in answer.events
        )
        session.add_all(
            exposure_rows(
                answer.exposures,
                user_id=conversation.user_id,
                message_id=assistant.id,
                conversation_id=conversation_id,
                now=now,
            )
        )
        if turn.settles is not None:
            settle_reservation(session, turn.settles)
        conversation.updated_at = now
        session.commit()
    return user_message, assistant
