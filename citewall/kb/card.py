"""The knowledge-base card: the unit of ingest, citation and analytics."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from citewall.kb.audiences import audience_names
from citewall.text.cleaning import text_problem

#: Metadata keys citewall derives itself. A card may not set them in free metadata: a ``url``
#: there would make an internal card look external at the serve boundary.
RESERVED_METADATA_KEYS = frozenset({"url", "license", "title", "content_hash", "audiences"})

#: What a member-facing reply may not hold: a link of any form (a URL, ``www.``, a Markdown
#: link) or HTML. It reaches the member as prose, where links come only from public sources.
_REPLY_LINK = re.compile(
    r"(?i)\b[a-z][a-z0-9+.-]*://|\bwww\.|\b(?:javascript|data|vbscript|mailto):|\]\(|<[a-z/!?]"
)


class Card(BaseModel):
    """A validated KB card. External (public) when ``url`` is set, internal otherwise.

    ``url`` has passed ``citewall.kb.urls.url_problem`` by the time a Card exists
    (the loaders refuse the card otherwise). ``reply`` is an internal card's member-facing
    part: what a support agent may tell the member, beside the staff notes in ``body``. Only
    the reply is ever quoted to a member; the body still informs retrieval. An external card
    has no reply (its body is already public).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, max_length=200, pattern=r"^[a-z0-9][a-z0-9._-]*$")
    title: str = Field(min_length=1, max_length=500)
    body: str = Field(min_length=1)
    url: str | None = None
    license: str | None = None
    reply: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: The groups of members the card is for (``kb.audiences``); empty: every member.
    audiences: tuple[str, ...] = ()

    @field_validator("audiences", mode="before")
    @classmethod
    def _group_names(cls, value: object) -> tuple[str, ...]:
        return audience_names(value) if value is not None else ()

    @field_validator("title", "body", "url", "license", "reply")
    @classmethod
    def _storable_text(cls, value: str | None) -> str | None:
        if value is not None and (problem := text_problem(value)):
            raise ValueError(f"contains {problem}; remove it from the card")
        return value

    @field_validator("reply")
    @classmethod
    def _member_facing(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        if info.data.get("url") is not None:
            raise ValueError(
                "only an internal card has a reply: an external card's body is already "
                "public; remove the reply or the url"
            )
        if not value.strip():
            raise ValueError("is empty; write what the member may be told, or omit it")
        if match := _REPLY_LINK.search(value):
            raise ValueError(
                f"contains a link or HTML ({match.group(0)!r} at character {match.start() + 1}); "
                "a reply is plain prose told to the member"
            )
        return value.strip()

    @field_validator("metadata")
    @classmethod
    def _storable_metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        if problem := _json_text_problem(value, "metadata"):
            raise ValueError(problem)
        return value

    @field_validator("metadata")
    @classmethod
    def _no_reserved_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        reserved = sorted(RESERVED_METADATA_KEYS.intersection(value))
        if reserved:
            raise ValueError(
                f"metadata key(s) {', '.join(reserved)} are reserved: "
                "set the card's own url/license/title fields instead"
            )
        return value

    @property
    def is_external(self) -> bool:
        return self.url is not None

    def content_hash(self) -> str:
        """Stable sha256 over everything that affects indexing and display (a card without
        a reply or audiences hashes as it did before they existed, so re-ingest leaves it
        alone)."""
        reply = {} if self.reply is None else {"reply": self.reply}
        audiences = {"audiences": list(self.audiences)} if self.audiences else {}
        payload = json.dumps(
            {
                **reply,
                **audiences,
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
        meta: dict[str, Any] = {
            k: v for k, v in self.metadata.items() if k not in RESERVED_METADATA_KEYS
        }
        meta["title"] = self.title
        if self.url is not None:
            meta["url"] = self.url
        if self.license is not None:
            meta["license"] = self.license
        if self.audiences:
            meta["audiences"] = list(self.audiences)
        meta["content_hash"] = self.content_hash()
        return meta


def _json_text_problem(value: object, where: str) -> str | None:
    """The first string in a JSON value (keys too) that cannot be stored, named by its path."""
    if isinstance(value, str):
        problem = text_problem(value)
        return f"{where} contains {problem}; remove it from the card" if problem else None
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and (problem := text_problem(key)):
                return f"a key in {where} contains {problem}; remove it from the card"
            if found := _json_text_problem(item, f"{where}.{key}"):
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            if found := _json_text_problem(item, f"{where}[{i}]"):
                return found
    return None
