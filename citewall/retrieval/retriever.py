"""The hybrid retriever: dense + BM25 -> weighted RRF -> cross-encoder rerank -> dedupe by card.

``hybrid_path`` says what really ran (decision 0003, docs/decisions/0003-data-path-contracts.md):

- ``"full"``: dense and BM25 fused, then the fused top ``rerank_top_n`` reranked (fewer when
  the time budget affords fewer, never fewer than cover the ``k`` cards returned, so every card
  on this path was scored by the cross-encoder);
- ``"rrf_only"``: fused, not reranked (no reranker, it raised, or it overran the budget);
- ``"dense_only"``: the lexical index is missing, corrupt or raised. The reranker does NOT run
  on this path: "full" means fused-then-reranked, and a reranked dense-only list has no honest
  label, so dense_only is the dense ranking as it came;
- ``None``: the KB is empty (or nothing matched): no chunks.

Dense search failing is not degraded around: it raises ``RetrievalError`` (HTTP 503).

Every stage that selects candidates (``dense``, ``lexical_hits``, and so ``retrieve``) takes
the ``CardFilter`` of the reader (``kb.audiences.retrievable_for``) and applies it inside the
index, before anything is ranked: a card outside the reader's audiences is never a candidate.

Each stage is a public method (``embed``, ``dense``, ``lexical_hits``, ``fuse``, ``read``,
``rerank``), so evaluation ranks questions with the production code rather than a copy of it;
``retrieve`` composes them with the time budget (``RerankBudget``), the live lexical index
(``ReloadingArtifact``) and per-stage timings (``StageTimer``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from citewall.errors import RetrievalError
from citewall.kb.audiences import EVERY_CARD, CardFilter
from citewall.retrieval.dedupe import best_per_parent, covering
from citewall.retrieval.fusion import rrf
from citewall.retrieval.protocols import Embedder, LexicalIndex, Reranker, VectorIndex
from citewall.retrieval.records import ChunkRecord, Hit, Vector, index_text
from citewall.retrieval.reloading import ReloadingArtifact
from citewall.retrieval.rerank_budget import RerankBudget
from citewall.retrieval.timer import StageTimer
from citewall.retrieval.types import ContextChunk, HybridPath, RetrievedContext

log = logging.getLogger(__name__)

#: A filtered dense search reads this many times ``k`` nearest chunks and keeps those the
#: reader may retrieve, by the live lexical build's audience map: when ``k`` remain they are the
#: nearest allowed chunks, at about the cost of an unfiltered search. Chroma's ``where`` search
#: (10-30 times dearer at 10k chunks, docs/audiences.md) runs only when hidden chunks crowd the
#: head or no lexical build is loaded.
FILTER_OVERFETCH = 4


@dataclass(frozen=True, slots=True)
class FusionSettings:
    """What the hybrid retriever reads: candidate counts, the fusion's k and weights, the
    reranked head and its time budget, the cards returned. Built from ``Settings``
    (``CITEWALL_DENSE_TOP_K`` and the rest) by ``retrieval.factory.fusion_settings``; the
    defaults are the settings' (``tests/retrieval/test_fusion_settings.py`` holds them equal),
    so a test tunes one field without a whole ``Settings``."""

    #: Nearest chunks the vector store returns (``dense``).
    dense_top_k: int = 40
    #: BM25 hits the lexical index returns (``lexical_hits``).
    bm25_top_k: int = 40
    #: The ``k`` of reciprocal rank fusion (``fuse``).
    rrf_k: int = 10
    rrf_dense_weight: float = 1.0
    rrf_bm25_weight: float = 1.0
    #: The fused head the cross-encoder reranks (``rerank``).
    rerank_top_n: int = 20
    #: The reranker's time budget per question (``RerankBudget``).
    rerank_budget_ms: int = 1500
    #: Cards returned (``retrieve``), the context the generator is given.
    context_k: int = 5


@dataclass(slots=True)
class _Candidate:
    chunk_id: str
    dense: Hit | None = None
    bm25: Hit | None = None
    rrf_rank: int | None = None
    rrf_score: float | None = None
    rerank_rank: int | None = None
    rerank_logit: float | None = None


@dataclass(frozen=True, slots=True)
class Reranked:
    """The reranked order (the reranked head, then the rest in fused order) and each reranked
    chunk's logit."""

    order: list[str]
    logits: dict[str, float]


class HybridRetriever:
    """Retrieves the context for a question; never raises for a degraded stage."""

    def __init__(
        self,
        fusion: FusionSettings,
        *,
        embedder: Embedder,
        vector_index: VectorIndex,
        lexical: ReloadingArtifact[LexicalIndex],
        reranker: Reranker | None,
        reranker_status: str = "",
    ) -> None:
        self.fusion = fusion
        self.embedder = embedder
        self.vector_index = vector_index
        self.lexical = lexical
        self.reranker = reranker
        self.reranker_status = reranker_status or ("loaded" if reranker else "not configured")
        self.budget = RerankBudget(fusion.rerank_budget_ms)

    def status(self) -> dict[str, Any]:
        """For /readyz: vector store count, lexical index state, reranker state and reason."""
        try:
            vector: dict[str, Any] = {"ok": True, "count": self.vector_index.count()}
        except Exception as exc:
            vector = {"ok": False, "count": None, "error": str(exc)}
        index, error = self.lexical.current()
        return {
            "vector_store": vector,
            "lexical_index": {
                "ok": index is not None,
                "chunks": len(index) if index is not None else None,
                "version": index.version if index is not None else None,
                "error": error,
            },
            "reranker": {
                "loaded": self.reranker is not None,
                "name": getattr(self.reranker, "name", None),
                "status": self.reranker_status,
                "budget_ms": self.fusion.rerank_budget_ms,
            },
        }

    # -- stages --------------------------------------------------------------------------------
    def embed(self, question: str) -> Vector:
        """The question's embedding; ``RetrievalError`` if the embedder fails."""
        try:
            return self.embedder.embed_query(question)
        except Exception as exc:
            raise RetrievalError(f"embedding the question failed: {exc}") from exc

    def dense(self, qvec: Vector, k: int | None = None, *, cards: CardFilter) -> list[Hit]:
        """The vector store's top ``k`` (default ``dense_top_k``) among the chunks ``cards``
        allows (``FILTER_OVERFETCH``); ``RetrievalError`` if down."""
        k = k or self.fusion.dense_top_k
        try:
            if not cards.everything:
                index, _ = self.lexical.current()
                if index is not None:
                    wide = self.vector_index.query(qvec, k * FILTER_OVERFETCH, cards=EVERY_CARD)
                    kept = [h for h in wide if cards.allows(index.audiences.get(h.chunk_id, ()))]
                    if len(kept) >= k or len(wide) < k * FILTER_OVERFETCH:
                        return [
                            Hit(h.chunk_id, rank, h.score)
                            for rank, h in enumerate(kept[:k], start=1)
                        ]
            return self.vector_index.query(qvec, k, cards=cards)
        except RetrievalError:
            raise
        except Exception as exc:
            raise RetrievalError(f"dense search failed: {exc}") from exc

    def lexical_hits(
        self, question: str, k: int | None = None, *, cards: CardFilter
    ) -> tuple[list[Hit], str | None]:
        """BM25's top ``k`` (default ``bm25_top_k``) among the chunks ``cards`` allows, or no
        hits and why (-> ``dense_only``)."""
        index, error = self.lexical.current()
        if index is None:
            return [], f"lexical index unavailable: {error}"
        try:
            return index.query(question, k or self.fusion.bm25_top_k, cards=cards), None
        except Exception as exc:
            log.warning("BM25 query failed, dense_only: %s", exc)
            return [], f"lexical search failed: {type(exc).__name__}: {exc}"

    def fuse(self, dense: Sequence[Hit], bm25: Sequence[Hit]) -> list[tuple[str, float]]:
        """Weighted RRF of the two rankings with the configured k and weights, best first."""
        s = self.fusion
        return rrf(
            [[h.chunk_id for h in dense], [h.chunk_id for h in bm25]],
            k=s.rrf_k,
            weights=[s.rrf_dense_weight, s.rrf_bm25_weight],
        )

    def read(self, chunk_ids: Sequence[str]) -> dict[str, ChunkRecord]:
        """Texts and metadata of ``chunk_ids`` from the vector store (unknown ids are absent)."""
        try:
            return {r.chunk_id: r for r in self.vector_index.get(list(chunk_ids))}
        except Exception as exc:
            raise RetrievalError(f"reading chunks from the vector store failed: {exc}") from exc

    def rerank(
        self,
        reranker: Reranker,
        question: str,
        order: Sequence[str],
        records: dict[str, ChunkRecord],
        top_n: int | None = None,
    ) -> Reranked:
        """The fused top ``top_n`` (default ``rerank_top_n``) of ``order`` reordered by the
        cross-encoder's logits, then the rest in fused order. Ties keep the fused order (the
        sort is stable). Raises what the reranker raises."""
        top = list(order[: top_n or self.fusion.rerank_top_n])
        logits = reranker.score(question, [index_text(records[c]) for c in top])
        if len(logits) != len(top):
            raise ValueError(f"{len(logits)} scores for {len(top)} passages")
        reranked = sorted(zip(top, logits, strict=True), key=lambda x: -x[1])
        return Reranked(
            order=[cid for cid, _ in reranked] + list(order[len(top) :]),
            logits={cid: float(logit) for cid, logit in reranked},
        )

    # -- the composed path ---------------------------------------------------------------------
    def retrieve(
        self,
        question: str,
        k: int | None = None,
        *,
        cards: CardFilter,
        vector: Vector | None = None,
    ) -> RetrievedContext:
        """The top ``k`` (default ``context_k``) cards for ``question`` among those ``cards``
        allows, best first.

        ``vector``: the question's embedding when the caller embedded it already (calibration
        embeds its probes in one batch)."""
        s = self.fusion
        k = k or s.context_k
        ctx = RetrievedContext()
        timer = StageTimer()
        with timer.stage("embed"):
            qvec = self.embed(question) if vector is None else vector
        with timer.stage("dense"):
            dense_hits = self.dense(qvec, cards=cards)
        if dense_hits:
            ctx.top_dense = max(h.score for h in dense_hits)
        else:
            ctx.notes.append("knowledge base is empty: nothing retrieved")
            ctx.timings_ms = timer.total()
            return ctx

        with timer.stage("bm25"):
            bm25_hits, lexical_problem = self.lexical_hits(question, cards=cards)
        path: HybridPath = "dense_only" if lexical_problem else "rrf_only"
        if lexical_problem:
            ctx.notes.append(lexical_problem)

        cands: dict[str, _Candidate] = {
            h.chunk_id: _Candidate(h.chunk_id, dense=h) for h in dense_hits
        }
        for h in bm25_hits:
            cands.setdefault(h.chunk_id, _Candidate(h.chunk_id)).bm25 = h

        with timer.stage("fuse"):
            if path == "dense_only":
                order = [h.chunk_id for h in dense_hits]
            else:
                fused = self.fuse(dense_hits, bm25_hits)
                for rank, (cid, score) in enumerate(fused, start=1):
                    cands[cid].rrf_rank, cands[cid].rrf_score = rank, score
                order = [cid for cid, _ in fused]

        # Texts and metadata of the candidates we may return or rerank. The store read grows
        # with the number of ids, so without a reranker only enough for k cards is read.
        if path == "rrf_only" and self.reranker is not None:
            head = order[: max(s.rerank_top_n, k * 8)]
            records = self.read(head)
        else:
            head, records = self._read_until_cards(order, k)
        # A BM25 id the vector store no longer has (mid-ingest) is dropped, not served; so is
        # a chunk whose stored audiences the filter refuses (the BM25 artifact and the vector
        # store can disagree for a moment mid-ingest: the vector store's record decides).
        order = [cid for cid in head if cid in records and cards.allows(records[cid].audiences)]

        if path == "rrf_only":
            order, path = self._rerank_within_budget(question, order, records, cands, ctx, timer, k)
        else:
            timer.skipped("rerank")

        best = best_per_parent(order, lambda cid: records[cid].parent_id)[:k]
        ctx.chunks = [
            self._context_chunk(records[cid], cands[cid], i) for i, cid in enumerate(best, 1)
        ]
        ctx.hybrid_path = path if ctx.chunks else None
        ctx.timings_ms = timer.total()
        return ctx

    def _read_until_cards(
        self, order: list[str], k: int
    ) -> tuple[list[str], dict[str, ChunkRecord]]:
        """Read ``order`` in slices until ``k`` distinct cards are in hand (or ``k * 8`` ids)."""
        step, limit = max(2 * k, 8), min(len(order), k * 8)
        records: dict[str, ChunkRecord] = {}
        read = 0
        while read < limit:
            records.update(self.read(order[read : min(read + step, limit)]))
            read = min(read + step, limit)
            if len({r.parent_id for r in records.values()}) >= k:
                break
        return order[:read], records

    def _rerank_within_budget(
        self,
        question: str,
        order: list[str],
        records: dict[str, ChunkRecord],
        cands: dict[str, _Candidate],
        ctx: RetrievedContext,
        timer: StageTimer,
        k: int,
    ) -> tuple[list[str], HybridPath]:
        reranker = self.reranker
        if reranker is None:
            ctx.notes.append(f"reranker: {self.reranker_status}")
            timer.skipped("rerank")
            return order, "rrf_only"
        wanted = min(len(order), self.fusion.rerank_top_n)
        # "full" means every card returned was scored: the head must cover k cards.
        minimum = covering(order, lambda cid: records[cid].parent_id, k)
        if minimum > wanted:
            timer.skipped("rerank")
            ctx.notes.append(
                f"reranker skipped: {k} cards need the fused top {minimum}, more than "
                f"rerank_top_n {wanted}"
            )
            return order, "rrf_only"
        passages = self.budget.plan(wanted=wanted, minimum=minimum)
        if passages == 0:
            ctx.rerank_over_budget = True
            timer.skipped("rerank")
            ctx.notes.append(
                f"reranker skipped: estimated {self.budget.estimate(minimum):.0f} ms for "
                f"{minimum} passages > budget {self.budget.budget_ms} ms"
            )
            return order, "rrf_only"
        if passages < wanted:
            ctx.notes.append(
                f"reranked the fused top {passages} of {wanted}: what the budget of "
                f"{self.budget.budget_ms} ms affords at the measured cost per passage"
            )
        try:
            with timer.stage("rerank"):
                reranked = self.rerank(reranker, question, order, records, passages)
        except Exception as exc:
            ctx.notes.append(f"reranker failed: {type(exc).__name__}: {exc}")
            log.warning("reranker failed, rrf_only: %s", exc)
            return order, "rrf_only"
        elapsed = timer.timings_ms["rerank"]
        self.budget.record(elapsed_ms=elapsed, passages=passages)
        if self.budget.overran(elapsed):
            ctx.rerank_over_budget = True
            ctx.notes.append(
                f"reranker over budget: {elapsed:.0f} ms > {self.budget.budget_ms} ms; "
                "its scores were discarded"
            )
            return order, "rrf_only"
        for rank, (cid, logit) in enumerate(reranked.logits.items(), start=1):
            cands[cid].rerank_rank, cands[cid].rerank_logit = rank, logit
        return reranked.order, "full"

    @staticmethod
    def _context_chunk(record: ChunkRecord, cand: _Candidate, rank: int) -> ContextChunk:
        card_meta = dict(record.metadata.get("card") or {})
        return ContextChunk(
            id=record.parent_id,
            text=record.text,
            title=str(record.metadata.get("title") or card_meta.get("title") or ""),
            source=record.metadata.get("url") or None,
            metadata=card_meta,
            reply=record.reply,
            chunk_id=record.chunk_id,
            rank=rank,
            dense_rank=cand.dense.rank if cand.dense else None,
            dense_score=cand.dense.score if cand.dense else None,
            bm25_rank=cand.bm25.rank if cand.bm25 else None,
            bm25_score=cand.bm25.score if cand.bm25 else None,
            rrf_rank=cand.rrf_rank,
            rrf_score=cand.rrf_score,
            rerank_rank=cand.rerank_rank,
            rerank_logit=cand.rerank_logit,
        )
