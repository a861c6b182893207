"""The retrieve stage's output: a ranked, deduplicated context and the path that produced it.

These types are the contract between retrieval, generation, citations, storage and the API.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

#: What really ran (DESIGN.md): ``"full"`` = dense+BM25 fused then cross-encoder reranked;
#: ``"rrf_only"`` = fused, not reranked (reranker absent, failed or over budget);
#: ``"dense_only"`` = lexical index missing or failed; ``None`` = nothing retrieved.
HybridPath = Literal["full", "rrf_only", "dense_only"]
HYBRID_PATHS: tuple[HybridPath, ...] = ("full", "rrf_only", "dense_only")


@dataclass(slots=True)
class ContextChunk:
    """One card in the retrieved context (after dedupe by parent, ``id`` is the card id).

    ``source`` is the card's verified public URL (None for internal cards). ``metadata`` is
    the card's FULL metadata as ingested (``url``, ``license``, ``title`` and internal keys
    such as ``author``/``path``/``team``/``content_hash``); the serve boundary decides what of
    it a member may see. Per-stage ranks are 1-based; ``None`` means the stage did not rank it.
    """

    id: str
    text: str
    title: str = ""
    source: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    chunk_id: str = ""
    rank: int = 0
    dense_rank: int | None = None
    dense_score: float | None = None
    bm25_rank: int | None = None
    bm25_score: float | None = None
    rrf_rank: int | None = None
    rrf_score: float | None = None
    rerank_rank: int | None = None
    rerank_logit: float | None = None

    @property
    def is_external(self) -> bool:
        return bool(self.source)


@dataclass(slots=True)
class RetrievedContext:
    """Ranked context chunks (best first) plus what ran and how long each stage took."""

    chunks: list[ContextChunk] = field(default_factory=list)
    hybrid_path: HybridPath | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: Human-readable reasons for any degradation (e.g. "reranker over budget: 812 ms > 500 ms").
    notes: list[str] = field(default_factory=list)
    rerank_over_budget: bool = False
