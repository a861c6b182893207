"""Adapters from storage rows to plain data for the wire schemas (no HTTP, no filtering).

The member/admin decision is not made here: routes choose what to serve.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import Session

from citewall.storage import conversations
from citewall.storage.conversations import ConversationSummary


def as_dict(row: Any) -> dict[str, Any]:
    """A storage result (ORM object, dataclass, pydantic model, Row or mapping) as a dict."""
    if isinstance(row, Mapping):
        return dict(row)
    if dataclasses.is_dataclass(row) and not isinstance(row, type):
        return dataclasses.asdict(row)
    if hasattr(row, "model_dump"):
        return dict(row.model_dump())
    if hasattr(row, "_asdict"):
        return dict(row._asdict())
    mapper = sa_inspect(row, raiseerr=False)
    if mapper is not None and hasattr(mapper, "mapper"):
        return {attr.key: getattr(row, attr.key) for attr in mapper.mapper.column_attrs}
    raise TypeError(f"cannot serialise {type(row).__name__}")


def conversation_summaries(
    session: Session, user_id: Any, limit: int, offset: int
) -> list[ConversationSummary]:
    """Conversations (one user's, or everyone's when ``user_id`` is None) with message counts."""
    return conversations.list_conversations(session, user_id, limit=limit, offset=offset)


def conversation_events(session: Session, messages: list[Any]) -> list[dict[str, Any]]:
    """Every retrieval event of a conversation's assistant messages, in turn and rank order."""
    return [
        as_dict(event)
        for m in messages
        if m.role == "assistant"
        for event in conversations.list_events(session, str(m.id))
    ]
