"""Adapters from storage rows to plain data for the wire schemas (no HTTP, no filtering).

The member/admin decision is not made here: routes choose what to serve.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import Session

from citewall.api.schemas import UnreadableStored
from citewall.storage import conversations
from citewall.storage.conversations import ConversationSummary

#: How much of an unreadable stored value an admin view shows.
UNREADABLE_RAW_CHARS = 2000


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


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def unreadable(value: object, what: str) -> UnreadableStored:
    """A placeholder for a stored ``value`` that is not the object ``what`` should be."""
    raw = json.dumps(value, ensure_ascii=False, default=repr)
    return UnreadableStored(
        title=f"{what} is not an object ({_kind(value)})", raw=raw[:UNREADABLE_RAW_CHARS]
    )


def admin_sources(stored: object) -> list[dict[str, Any] | UnreadableStored]:
    """A message's stored sources for an admin: each object as stored, anything else (``null``,
    a double-encoded JSON string, a number) as a marked placeholder in its place.

    >>> [type(s).__name__ for s in admin_sources([{"card_id": "a"}, None, '{"card_id": "b"}'])]
    ['dict', 'UnreadableStored', 'UnreadableStored']
    """
    if stored is None:
        return []
    if not isinstance(stored, list):
        return [unreadable(stored, "the stored sources list")]
    return [
        dict(item) if isinstance(item, Mapping) else unreadable(item, "stored source")
        for item in stored
    ]


def admin_timings(stored: object) -> dict[str, Any] | None:
    """A message's stored timings for an admin, or a marked placeholder's dump."""
    if stored is None or isinstance(stored, Mapping):
        return dict(stored) if stored is not None else None
    return unreadable(stored, "stored timings").model_dump()
