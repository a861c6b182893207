"""The serve boundary: THE single helper that decides which sources a member may see.

See decision 0002, external-only citations (docs/decisions/0002-external-only-citations.md;
the member's view is described in docs/citations.md), and decision 0003, the data path's
contracts (docs/decisions/0003-data-path-contracts.md). Every member path that serves sources
(chat response, the final stream event, history reload, search) must call
``external_sources_only``; admin paths see full data.

A source is kept only when its allowlisted metadata has a non-empty string ``url`` that passes
``url_problem``. Its text (title, excerpt, metadata values) passes ``clean_text``: no control or
invisible formatting character (a bidi override in a hostile public card) reaches a member.
What is returned is rebuilt from allowlisted data alone: an internal card
(no url) never appears, and an external card's internal metadata keys (author, path,
content_hash, owner notes...) never travel. Its input is typed: stored rows are validated once,
when read (``storage.sources.readable_sources``).

A ``retrieved_score`` is served only when the answer's ``hybrid_path`` is ``"full"`` (decision
0003: the score exists only for reranked answers). The path is a required argument, so no caller can
forget it, and a corrupt row that stored a score under another path serves none.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from citewall.boundary.schemas import METADATA_ALLOWLIST, SourcePublic
from citewall.kb.urls import url_problem
from citewall.storage.sources import StoredSource
from citewall.text.cleaning import clean_text

__all__ = ["EXCERPT_CHARS", "METADATA_ALLOWLIST", "SourcePublic", "external_sources_only"]

#: Length of the excerpt of an external card's own text.
EXCERPT_CHARS = 280


def external_sources_only(
    sources: Iterable[StoredSource], *, hybrid_path: str | None
) -> list[SourcePublic]:
    """Keep the external sources and rebuild each from allowlisted data only.

    ``sources`` are stored sources (as the pipeline built them, or as
    ``storage.sources.readable_sources`` read them back). Duplicate card ids keep the first.
    ``hybrid_path`` is the path of the answer (or search) the sources belong to: scores are
    kept only on ``"full"``.

    >>> rows = [StoredSource(n=1, card_id="pub", title="Refunds", text="Refunds take 5 days.",
    ...          retrieved_score=87.0,
    ...          metadata={"url": "https://help.example/r", "author": "ann"}),
    ...         StoredSource(n=2, card_id="playbook", title="Internal", metadata={"author": "bob"})]
    >>> [(s.card_id, s.url, s.metadata) for s in external_sources_only(rows, hybrid_path="full")]
    [('pub', 'https://help.example/r', {'url': 'https://help.example/r'})]
    >>> [s.retrieved_score for s in external_sources_only(rows, hybrid_path="rrf_only")]
    [None]
    """
    scored = hybrid_path == "full"
    out: list[SourcePublic] = []
    seen: set[str] = set()
    for source in sources:
        public = _public(source, scored=scored)
        if public is not None and public.card_id not in seen:
            seen.add(public.card_id)
            out.append(public)
    return out


def _allowlisted(metadata: dict[str, object]) -> dict[str, str]:
    # Cleaned, but a value that cleaning would change is not a URL a member may follow.
    return {
        k: clean
        for k, v in metadata.items()
        if k in METADATA_ALLOWLIST and isinstance(v, str)
        if (clean := clean_text(v)).strip() and (k != "url" or clean == v)
    }


def _public(source: StoredSource, *, scored: bool) -> SourcePublic | None:
    meta = _allowlisted(source.metadata)
    url = meta.get("url")
    if url is None or url_problem(url) is not None or not source.card_id:
        return None
    title = meta.get("title") or clean_text(source.title)
    licence = meta.get("license") or _string(source.source_license) or None
    return SourcePublic(
        card_id=source.card_id,
        title=title,
        url=url,
        license=licence,
        retrieved_score=_score(source.retrieved_score) if scored else None,
        excerpt=_excerpt(source.text),
        metadata=meta,
    )


def _string(value: str | None) -> str:
    return clean_text(value) if value is not None else ""


def _score(value: float | None) -> float | None:
    if value is None or not math.isfinite(value) or not 0.0 <= value <= 100.0:
        return None
    return value


def _excerpt(text: str) -> str:
    """The start of the external card's own text, cut at a word boundary."""
    flat = " ".join(clean_text(text).split())
    if len(flat) <= EXCERPT_CHARS:
        return flat
    cut = flat[:EXCERPT_CHARS].rsplit(" ", 1)[0]
    return cut + "…"
