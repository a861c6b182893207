"""Saving one turn atomically: the question, the answer and its retrieval events.

A turn is the user's message, the assistant's message (content with ``[n]`` markers, the FULL
sources list, hybrid_path, timings) and one retrieval event per retrieved card. All of it is
written in one transaction: a reader never sees an answer without its events, or the reverse.
A regenerated answer is a turn without a new question (``save_turn(regenerated_from=...)``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from citewall.errors import ConflictError
from citewall.retrieval.types import HYBRID_PATHS, RetrievalRecord, finite
from citewall.storage.conversations import TITLE_MAX_CHARS, not_found
from citewall.storage.db import begin_write
from citewall.storage.exposure import ExposureRecord, exposure_rows
from citewall.storage.exposure_reservations import settle_reservation
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


def _title(title: str) -> str:
    # A display label derived from the first question: shorten rather than refuse.
    clean = " ".join(title.split()) or "Untitled"
    if len(clean) <= TITLE_MAX_CHARS:
        return clean
    return clean[: TITLE_MAX_CHARS - 1].rstrip() + "…"


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


def _check_turn(sources: Any, hybrid_path: str | None, timings: Any) -> None:
    """Refuse what one of the two databases would store differently.

    ValueErrors here become "saving the turn failed and was rolled back: ..." in save_turn.
    Text is not checked: the column types store any string (``storage.types``).
    """
    if not isinstance(sources, list) or not all(isinstance(s, dict) for s in sources):
        raise ValueError("sources must be a list of JSON objects")
    if not isinstance(timings, dict):
        raise ValueError("timings must be a JSON object")
    if hybrid_path is not None and hybrid_path not in HYBRID_PATHS:
        raise ValueError(
            f"unknown hybrid_path {hybrid_path!r}; expected one of {', '.join(HYBRID_PATHS)} "
            "or None"
        )


def save_turn(
    session: Session,
    *,
    conversation_id: str,
    question: str,
    answer_content: str,
    sources: list[dict[str, Any]],
    hybrid_path: str | None,
    timings: dict[str, Any],
    generator: str | None,
    dropped_markers: int,
    events: Sequence[RetrievalRecord],
    new_conversation: NewConversation | None = None,
    retitle: Retitle | None = None,
    answer_status: AnswerStatus = "answered",
    support: float | None = None,
    retrieval_query: str | None = None,
    exposures: Sequence[ExposureRecord] = (),
    restricted: Restriction | None = None,
    regenerated_from: str | None = None,
    owner: int | None = None,
    settles: str | None = None,
    now: datetime | None = None,
) -> tuple[Message, Message]:
    """Write the user message, the assistant message and its retrieval events in ONE
    transaction; return ``(user_message, assistant_message)``.

    With ``new_conversation``, the conversation ``conversation_id`` is created in the same
    transaction (its title whitespace-collapsed and shortened to 200 characters), so a failed
    first turn leaves no empty conversation behind. ``retitle`` names an existing conversation
    in the same transaction.

    ``sources`` is stored exactly as given (the full list, internal cards included), but for
    characters no database can hold (``text.cleaning.encodable``); it must be a list of JSON
    objects. ``answer_status`` and ``support`` go on the assistant message, ``retrieval_query``
    (the text retrieval ran with) on each retrieval event. ``exposures`` (internal cards the
    answer cited or copied from) are stored for the conversation's owner, ``restricted`` on the
    assistant message; ``settles`` names the turn's exposure reservation, deleted in the same
    transaction (``exposure_reservations``); ``now`` (default: the current time) stamps every
    row. Any failure rolls everything back and raises ``StorageError`` (``NotFoundError`` if
    the conversation does not exist, or ``owner`` is given and does not own it).

    A conversation its member deleted (hid) meanwhile still takes the turn, and stays hidden:
    what the member was shown is recorded whatever happened to the conversation.

    With ``regenerated_from`` (the conversation's latest answer) the turn answers that answer's
    question again: no user message is written, the new answer records the one it replaces, and
    the stored question is returned as the first message. ``ConflictError`` when that answer is
    no longer the latest (another turn came first).
    """
    with storage_errors(session, "saving the turn", catch_all=True):
        _check_turn(sources, hybrid_path, timings)
        if answer_status not in ANSWER_STATUSES:
            raise ValueError(f"unknown answer_status {answer_status!r}")
        if restricted is not None and restricted not in RESTRICTIONS:
            raise ValueError(f"unknown restriction {restricted!r}")
        support = finite(support)
        now = now if now is not None else utcnow()
        begin_write(session)
        if new_conversation is not None:
            session.add(
                Conversation(
                    id=conversation_id,
                    user_id=new_conversation.user_id,
                    title=_title(new_conversation.title),
                    created_at=now,
                    updated_at=now,
                )
            )
            session.flush()
        # Row lock on PostgreSQL: concurrent turns of one conversation take seq numbers in turn.
        conversation = session.scalar(
            select(Conversation).where(Conversation.id == conversation_id).with_for_update()
        )
        if conversation is None or owner not in (None, conversation.user_id):
            raise not_found(conversation_id)
        if retitle is not None and conversation.title == retitle.replaces:
            conversation.title = _title(retitle.title)
        if regenerated_from is None:
            last_seq = session.scalar(
                select(func.max(Message.seq)).where(Message.conversation_id == conversation_id)
            )
            seq = int(last_seq or 0) + 1
            user_message = Message(
                id=new_uuid(),
                conversation_id=conversation_id,
                seq=seq,
                role="user",
                content=question,
                sources=[],
                timings={},
                created_at=now,
            )
            session.add(user_message)
        else:
            user_message, replaced = latest_turn(session, conversation_id)
            if replaced is None or replaced.id != regenerated_from:
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
            content=answer_content,
            sources=sources,
            hybrid_path=hybrid_path,
            timings=timings,
            generator=generator,
            dropped_markers=dropped_markers,
            answer_status=answer_status,
            support=support,
            restricted=restricted,
            regenerated_from=regenerated_from,
            created_at=now,
        )
        session.add(assistant)
        session.flush()  # messages before the events that reference them
        session.add_all(
            _event_row(
                e,
                message_id=assistant.id,
                conversation_id=conversation_id,
                query=retrieval_query,
                now=now,
            )
            for e in events
        )
        session.add_all(
            exposure_rows(
                exposures,
                user_id=conversation.user_id,
                message_id=assistant.id,
                conversation_id=conversation_id,
                now=now,
            )
        )
        if settles is not None:
            settle_reservation(session, settles)
        conversation.updated_at = now
        session.commit()
    return user_message, assistant
