"""Builders for stored rows that tests set up directly (production creates them in a turn)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from citewall.retrieval.types import RetrievalRecord
from citewall.storage.exposure.rows import ExposureRecord
from citewall.storage.models import Conversation, Exposure, Message, new_uuid
from citewall.storage.sources import StoredSource
from citewall.storage.turns import AnswerRecord, NewConversation, Retitle, TurnRecord, save_turn


def add_conversation(session: Session, user_id: int, title: str = "t") -> Conversation:
    """A conversation with no messages yet, committed."""
    conversation = Conversation(id=new_uuid(), user_id=user_id, title=title)
    session.add(conversation)
    session.commit()
    return conversation


def retrieval_record(card_id: Any, final_rank: int, **fields: Any) -> RetrievalRecord:
    """A retrieval-event record; stages not given did not rank the card."""
    values: dict[str, Any] = {
        "dense_rank": None,
        "dense_score": None,
        "bm25_rank": None,
        "bm25_score": None,
        "rrf_rank": None,
        "rrf_score": None,
        "rerank_rank": None,
        "rerank_logit": None,
        "hybrid_path": None,
        "cited": False,
        "is_external": False,
    }
    values.update(fields)
    return RetrievalRecord(card_id=card_id, final_rank=final_rank, **values)


def add_exposed_turn(
    session: Session,
    user_id: int,
    at: datetime,
    exposures: Mapping[str, tuple[Sequence[Any], int]],
    *,
    question: str = "q",
    restricted: str | None = None,
    conversation_id: str | None = None,
) -> str:
    """A question and its answer at time ``at`` in a conversation of ``user_id`` (a new one unless
    given), with one exposure row per card of ``exposures`` (card id -> (sentence keys, longest
    span)); committed. Returns the answer's message id."""
    if conversation_id is None:
        conversation_id = add_conversation(session, user_id).id
    last = session.scalar(
        select(func.max(Message.seq)).where(Message.conversation_id == conversation_id)
    )
    seq = int(last or 0) + 1
    asked = Message(
        conversation_id=conversation_id, seq=seq, role="user", content=question, created_at=at
    )
    answer = Message(
        conversation_id=conversation_id,
        seq=seq + 1,
        role="assistant",
        content="answer",
        answer_status="answered",
        restricted=restricted,
        created_at=at,
    )
    session.add_all([asked, answer])
    session.flush()
    session.add_all(
        Exposure(
            user_id=user_id,
            message_id=answer.id,
            conversation_id=conversation_id,
            card_id=card_id,
            cited=True,
            sentences=list(keys),
            card_sentences=10,
            longest_span=span,
            created_at=at,
        )
        for card_id, (keys, span) in exposures.items()
    )
    session.commit()
    return answer.id


def saved_turn(
    session: Session,
    *,
    conversation_id: str,
    question: str = "q",
    answer_content: str = "a",
    sources: Sequence[Mapping[str, Any]] = (),
    hybrid_path: Any = None,
    timings: Mapping[str, float] | None = None,
    generator: str | None = "extractive",
    dropped_markers: int = 0,
    events: Sequence[RetrievalRecord] = (),
    new_conversation: NewConversation | None = None,
    retitle: Retitle | None = None,
    answer_status: Any = "answered",
    support: float | None = None,
    retrieval_query: str | None = None,
    exposures: Sequence[ExposureRecord] = (),
    restricted: Any = None,
    regenerated_from: str | None = None,
    owner: int | None = None,
    settles: str | None = None,
    now: datetime | None = None,
) -> tuple[Message, Message]:
    """``save_turn`` of the ``TurnRecord`` these fields make (sources given as stored dicts)."""
    record = TurnRecord(
        conversation_id=conversation_id,
        question=question,
        answer=AnswerRecord(
            content=answer_content,
            sources=tuple(StoredSource.model_validate(s) for s in sources),
            hybrid_path=hybrid_path,
            timings_ms=dict(timings or {}),
            generator_name=generator,
            dropped_markers=dropped_markers,
            events=tuple(events),
            answer_status=answer_status,
            support=support,
            retrieval_query=retrieval_query,
            exposures=tuple(exposures),
            restricted=restricted,
        ),
        new_conversation=new_conversation,
        retitle=retitle,
        regenerated_from=regenerated_from,
        owner=owner,
        settles=settles,
    )
    return save_turn(session, record, now=now)
