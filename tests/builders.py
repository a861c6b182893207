"""Builders for stored rows that tests set up directly (production creates them in a turn)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from citewall.retrieval.types import RetrievalRecord
from citewall.storage.models import Conversation, new_uuid


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
