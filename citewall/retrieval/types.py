"""The retrieve stage's output: a ranked, deduplicated context and the path that produced it.

These types are the contract between retrieval, generation, citations, storage and the API.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, Literal

#: What really ran (decision 0003): ``"full"`` = dense+BM25 fused then cross-encoder reranked;
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
    it a member may see. ``reply`` is an internal card's member-facing part (``Card.reply``):
    ``text`` holds its staff notes, which inform ranking but are never quoted to a member.
    Per-stage ranks are 1-based; ``None`` means the stage did not rank it.
    """

    id: str
    text: str
    title: str = ""
    source: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    reply: str | None = None
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

    @property
    def quotable_text(self) -> str:
        """What an answer may quote to a member: an external card's text, an internal card's
        reply only (empty without one: its staff notes are never quoted).

        >>> ContextChunk(id="pb", text="Log it in Helm.", reply="A credit is due.").quotable_text
        'A credit is due.'
        >>> ContextChunk(id="pb", text="Log it in Helm.").quotable_text
        ''
        """
        if self.is_external:
            return self.text or ""
        return self.reply or ""

    @property
    def all_text(self) -> str:
        """Every word the card holds in this chunk (the text, then the reply): what copy
        detection and exposure accounting compare an answer with."""
        return "\n\n".join(part for part in (self.text, self.reply) if part)


@dataclass(slots=True)
class RetrievedContext:
    """Ranked context chunks (best first) plus what ran and how long each stage took."""

    chunks: list[ContextChunk] = field(default_factory=list)
    hybrid_path: HybridPath | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: Human-readable reasons for any degradation (e.g. "reranker over budget: 812 ms > 500 ms").
    notes: list[str] = field(default_factory=list)
    rerank_over_budget: bool = False
    #: The best cosine similarity of the question to any chunk (dense retrieval's first hit),
    #: whatever the later stages kept: the answerability signal.
    top_dense: float | None = None


@dataclass(frozen=True, slots=True)
class RetrievalRecord:
    """One retrieved card of one answered turn, as the retrieval-event log stores it: its rank
    and score at every stage, the path that ran, whether the answer cited it.

    Scores are plain finite floats or None (``from_chunk`` drops NaN and infinities, which the
    two databases would store differently).
    """

    card_id: str
    final_rank: int
    dense_rank: int | None
    dense_score: float | None
    bm25_rank: int | None
    bm25_score: float | None
    rrf_rank: int | None
    rrf_score: float | None
    rerank_rank: int | None
    rerank_logit: float | None
    hybrid_path: HybridPath | None
    cited: bool
    is_external: bool

    @classmethod
    def from_chunk(
        cls, chunk: ContextChunk, rank: int, hybrid_path: HybridPath | None, cited: bool
    ) -> RetrievalRecord:
        """The record of ``chunk`` at 1-based context position ``rank``."""
        return cls(
            card_id=chunk.id,
            final_rank=chunk.rank or rank,
            dense_rank=chunk.dense_rank,
            dense_score=finite(chunk.dense_score),
            bm25_rank=chunk.bm25_rank,
            bm25_score=finite(chunk.bm25_score),
            rrf_rank=chunk.rrf_rank,
            rrf_score=finite(chunk.rrf_score),
            rerank_rank=chunk.rerank_rank,
            rerank_logit=finite(chunk.rerank_logit),
            hybrid_path=hybrid_path,
            cited=cited,
            is_external=chunk.is_external,
        )


#: The fields of a retrieval-event record, in order (the event log's columns).
RETRIEVAL_RECORD_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(RetrievalRecord))


def finite(value: float | None) -> float | None:
    """A plain, finite float (numpy scalars become float; NaN and infinities become None).

    >>> finite(float("nan")) is None, finite(2)
    (True, 2.0)
    """
    if value is None:
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None
