"""Stored values an admin view shows as they are, and marks where they are not the shape they
should be (a source that is ``null`` or a double-encoded string), instead of failing the page."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from citewall.api.schemas import UnreadableStored

#: How much of an unreadable stored value an admin view shows.
UNREADABLE_RAW_CHARS = 2000


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
