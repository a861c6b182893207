"""The stored source: one cited card as ``messages.sources`` holds it, and reading it back.

The pipeline builds ``StoredSource`` models and they stay models until the column stores them
(``save_turn`` dumps them as JSON). A stored row is validated once, when a member's view reads
it (``readable_sources``): an item that is not a stored source (a row corrupted since it was
written) is left out there, never guessed at. The admin view shows every item as stored
(``api.storage_rows``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError


class StoredSource(BaseModel):
    """One cited card as stored in ``messages.sources`` (the FULL record, internal included).

    ``n`` is the context number the generator saw; ``text`` the context chunk text;
    ``metadata`` the card's full metadata. Never sent to a member as is: the serve boundary
    (``citewall.boundary``) filters and reshapes it.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    n: int
    card_id: str
    title: str = ""
    text: str = ""
    span: str | None = None
    source_url: str | None = None
    source_license: str | None = None
    retrieved_score: float | None = None
    attributed: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)


_SOURCE = TypeAdapter(StoredSource)


def dump_sources(sources: Iterable[StoredSource]) -> list[dict[str, Any]]:
    """What the ``messages.sources`` column stores for ``sources``: each model as it was
    built (the fields it was given, extra ones included)."""
    return [s.model_dump(exclude_unset=True) for s in sources]


def readable_sources(stored: object) -> list[StoredSource]:
    """The stored sources of a message column value, each validated; anything that is not a
    stored source (``null``, a string, an object without ``card_id``) is left out.

    >>> [s.card_id for s in readable_sources([{"n": 1, "card_id": "a"}, None, {"id": "b"}])]
    ['a']
    >>> readable_sources({"card_id": "a"})
    []
    """
    if not isinstance(stored, list):
        return []
    readable: list[StoredSource] = []
    for item in stored:
        try:
            readable.append(_SOURCE.validate_python(item, strict=True))
        except ValidationError:
            continue
    return readable
