"""``SourcePublic``: the only shape in which a source leaves the server for a member.

It has no field that could hold an internal value (no body, no span, no author or path), and
its ``metadata`` re-applies the allowlist on construction, so even a careless caller cannot put
an internal key into it. Build it with ``external_sources_only``, never by hand.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

#: Metadata keys a member may see for an external source (the metadata allowlist of decision
#: 0002, docs/decisions/0002-external-only-citations.md).
METADATA_ALLOWLIST: frozenset[str] = frozenset(
    {"url", "license", "title", "section", "product", "updated"}
)


class SourcePublic(BaseModel):
    """An external (url-bearing) cited source, as a member receives it."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    card_id: str
    title: str = ""
    url: str
    license: str | None = None
    retrieved_score: float | None = None
    #: The external card's own text, shortened. Never answer text.
    excerpt: str = ""
    metadata: dict[str, str] = {}

    @field_validator("metadata", mode="before")
    @classmethod
    def _allowlisted(cls, value: Any) -> dict[str, str]:
        if not isinstance(value, dict):
            return {}
        return {k: v for k, v in value.items() if k in METADATA_ALLOWLIST and isinstance(v, str)}
