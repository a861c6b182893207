"""The knowledge-base card: the unit of ingest, citation and analytics."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Card(BaseModel):
    """A validated KB card. External (public) when ``url`` is set, internal otherwise.

    ``url`` has passed ``citewall.ingest.urls.url_problem`` by the time a Card exists
    (the loaders refuse the card otherwise).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, max_length=200, pattern=r"^[a-z0-9][a-z0-9._-]*$")
    title: str = Field(min_length=1, max_length=500)
    body: str = Field(min_length=1)
    url: str | None = None
    license: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def is_external(self) -> bool:
        return self.url is not None

    def content_hash(self) -> str:
        """Stable sha256 over everything that affects indexing and display."""
        payload = json.dumps(
            {
                "id": self.id,
                "title": self.title,
                "body": self.body,
                "url": self.url,
                "license": self.license,
                "metadata": self.metadata,
            },
            sort_keys=True,
            ensure_ascii=False,
            default=str,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def full_metadata(self) -> dict[str, Any]:
        """What ``ContextChunk.metadata`` carries: card metadata plus url/license/title/hash."""
        meta: dict[str, Any] = dict(self.metadata)
        meta["title"] = self.title
        if self.url is not None:
            meta["url"] = self.url
        if self.license is not None:
            meta["license"] = self.license
        meta["content_hash"] = self.content_hash()
        return meta
