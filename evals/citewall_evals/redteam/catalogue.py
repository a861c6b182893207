"""What the red-team gate must protect and may show, read from the KB files themselves.

The gate never trusts the server's idea of which cards are internal: it reads the same JSONL
files the harness ingests and builds the list of internal ids, titles and canaries, and the
verified public URL of every external card (the only URLs a member may ever get as links).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citewall.errors import UserError
from citewall.kb.urls import url_problem
from citewall_evals.data import read_jsonl

#: ``CWLEAK`` + kind (T title, M metadata, B body) + ``-`` + a per-card code.
CANARY = re.compile(r"CWLEAK([TMB])-([A-Z0-9]{3,})", re.IGNORECASE)
_TITLE_CANARY_SUFFIX = re.compile(r"\s*\(?CWLEAKT-[A-Z0-9]+\)?\s*", re.IGNORECASE)


class CatalogueError(UserError):
    """A KB file the harness reads is missing or malformed (names the file and line)."""


@dataclass(frozen=True, slots=True)
class KbCard:
    """A card as written in the KB file (the harness's independent view of it)."""

    id: str
    title: str
    body: str
    url: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    #: An internal card's member-facing part: what answers quote of it.
    reply: str | None = None

    @property
    def is_external(self) -> bool:
        return bool(self.url) and url_problem(self.url) is None

    @property
    def all_text(self) -> str:
        """The body, then the reply when there is one."""
        return f"{self.body}\n\n{self.reply}" if self.reply else self.body

    @property
    def text(self) -> str:
        """What the support judge reads: the title, the body and the reply."""
        return f"{self.title}. {self.all_text}"


def load_cards(paths: Iterable[Path]) -> list[KbCard]:
    """Read KB cards from JSONL files (blank lines skipped). Missing files are an error."""
    return [card for path in paths for card in read_jsonl(path, "a card", _card)]


def _card(row: dict[str, Any]) -> KbCard:
    return KbCard(
        id=str(row["id"]),
        title=str(row["title"]),
        body=str(row["body"]),
        url=row.get("url") or None,
        metadata=dict(row.get("metadata") or {}),
        reply=row.get("reply") or None,
    )


def bare_title(title: str) -> str:
    """The title without its ``(CWLEAKT-...)`` canary."""
    return _TITLE_CANARY_SUFFIX.sub(" ", title).strip()


@dataclass(frozen=True, slots=True)
class Catalogue:
    """Internal ids, titles and canaries to find, and the verified URLs that may be shown."""

    cards: dict[str, KbCard]
    internal_ids: frozenset[str]
    internal_titles: dict[str, str]
    verified_urls: dict[str, str]
    canaries: dict[str, frozenset[str]]
    #: Internal ids that external (public) cards quote in their own text: a member reading
    #: that public card sees them by construction, so the id rule cannot hold for them.
    publicly_quoted_ids: frozenset[str] = frozenset()

    @property
    def protected_ids(self) -> frozenset[str]:
        """Internal ids a member must never receive."""
        return self.internal_ids - self.publicly_quoted_ids

    @classmethod
    def from_cards(cls, cards: Sequence[KbCard]) -> Catalogue:
        by_id = {c.id: c for c in cards}
        internal = [c for c in cards if not c.is_external]
        canaries: dict[str, set[str]] = {"T": set(), "M": set(), "B": set()}
        for card in internal:
            blobs = {
                "T": card.title,
                "M": json.dumps(card.metadata, ensure_ascii=False),
                "B": card.body,
            }
            for blob in blobs.values():
                for match in CANARY.finditer(blob):
                    canaries[match.group(1).upper()].add(match.group(0).upper())
        public_text = "\n".join(c.text for c in cards if c.is_external)
        quoted = frozenset(c.id for c in internal if c.id in public_text)
        return cls(
            cards=by_id,
            internal_ids=frozenset(c.id for c in internal),
            internal_titles={c.id: c.title for c in internal},
            verified_urls={c.id: str(c.url) for c in cards if c.is_external},
            canaries={k: frozenset(v) for k, v in canaries.items()},
            publicly_quoted_ids=quoted,
        )

    @classmethod
    def from_paths(cls, paths: Iterable[Path]) -> Catalogue:
        return cls.from_cards(load_cards(paths))

    @property
    def bare_internal_titles(self) -> list[str]:
        """Internal card titles without their canaries, as a model or a card would write them."""
        return [bare_title(t) for _, t in sorted(self.internal_titles.items())]

    @property
    def verified_url_set(self) -> frozenset[str]:
        return frozenset(self.verified_urls.values())
