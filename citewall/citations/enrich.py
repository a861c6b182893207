"""Server-side citation enrichment (decision 0001, locked choices A-E:
docs/decisions/0001-server-side-citation-enrichment.md).

For each citation, looked up by card id over the retrieved context (D):

- ``source_url``: the chunk's ``source`` when it passes ``url_problem`` (never model text),
- ``source_license``: the chunk metadata's ``license`` when it is a non-empty string,
- ``retrieved_score``: ``round(100 * sigmoid(rerank_logit))`` only when
  ``hybrid_path == "full"`` and the logit is finite (A, B).

Each citation is enriched inside its own ``try``: a failure leaves THAT citation unchanged, and
the helper never raises (C). A card missing from the context gets the three fields absent.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

from citewall.citations.models import Citation
from citewall.citations.scores import retrieved_score
from citewall.kb.urls import url_problem
from citewall.retrieval.types import RetrievedContext


def enrich_citations(citations: Iterable[Citation], context: RetrievedContext) -> list[Citation]:
    """Attach source_url, source_license and retrieved_score from the retrieved context.

    Never raises: on any failure the affected citation comes back as it was.
    """
    try:
        items = list(citations)
    except Exception:
        return []
    try:
        lookup = _lookup(context)
        full = getattr(context, "hybrid_path", None) == "full"
    except Exception:
        return items
    out: list[Citation] = []
    for citation in items:
        try:
            out.append(_enrich_one(citation, lookup, full))
        except Exception:
            out.append(citation)
    return out


def _lookup(context: RetrievedContext) -> dict[str, Any]:
    """card id -> first (best-ranked) chunk; malformed chunks are skipped."""
    lookup: dict[str, Any] = {}
    for chunk in getattr(context, "chunks", None) or ():
        try:
            key = chunk.id
            if isinstance(key, str) and key not in lookup:
                lookup[key] = chunk
        except Exception:
            continue
    return lookup


def _enrich_one(citation: Citation, lookup: Mapping[str, Any], full: bool) -> Citation:
    chunk = lookup.get(citation.card_id)
    source_url: str | None = None
    source_license: str | None = None
    score: float | None = None
    if chunk is not None:
        source = getattr(chunk, "source", None)
        if isinstance(source, str) and url_problem(source) is None:
            source_url = source
        metadata = getattr(chunk, "metadata", None)
        if isinstance(metadata, Mapping):
            licence = metadata.get("license")
            if isinstance(licence, str) and licence.strip():
                source_license = licence
        if full:
            logit = getattr(chunk, "rerank_logit", None)
            if _is_finite_number(logit):
                score = retrieved_score(float(logit))  # type: ignore[arg-type]
    # model_validate re-checks every field (model_copy would skip validation).
    return Citation.model_validate(
        {
            "card_id": citation.card_id,
            "span": citation.span,
            "attributed": citation.attributed,
            "source_url": source_url,
            "source_license": source_license,
            "retrieved_score": score,
        }
    )


def _is_finite_number(value: object) -> bool:
    # numbers.Real also admits numpy floats, which a reranker may hand back.
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:
        return math.isfinite(float(value))
    except (OverflowError, TypeError):
        return False
