"""The hybrid retriever: dense + BM25 -> weighted RRF -> cross-encoder rerank -> dedupe by card.

``hybrid_path`` says what really ran (DESIGN.md):

- ``"full"``: dense and BM25 fused, then the fused top ``rerank_top_n`` reranked;
- ``"rrf_only"``: fused, not reranked (no reranker, it raised, or it overran the budget);
- ``"dense_only"``: the lexical index is missing, corrupt or raised. The reranker does NOT run
  on this path: "full" means fused-then-reranked, and a reranked dense-only list has no honest
  label, so dense_only is the dense ranking as it came;
- ``None``: the KB is empty (or nothing matched): no chunks.

Dense search failing is not degraded around: it raises ``RetrievalError`` (HTTP 503).

The time budget: a cross-encoder forward pass cannot be interrupted cheaply, so the call is
timed and, when it overran ``rerank_budget_ms``, its scores are DISCARDED and the path is
``rrf_only`` with ``rerank_over_budget=True``. To avoid paying for work that will be thrown
away on an overloaded machine, the retriever keeps a moving estimate of the cost per passage;
when the estimate for this call exceeds the budget it skips the reranker (same label and flag,
note "skipped") and re-measures on every ``PROBE_EVERY``-th skipped request.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from citewall.config import Settings
from citewall.errors import RetrievalError
from citewall.ingest.chunking import index_text
from citewall.retrieval.dedupe import best_per_parent
from citewall.retrieval.fusion import rrf
from citewall.retrieval.lexical_index import BM25Index, LexicalIndexError
from citewall.retrieval.protocols import ChunkRecord, Embedder, Hit, Reranker, VectorIndex
from citewall.retrieval.types import ContextChunk, HybridPath, RetrievedContext

log = logging.getLogger(__name__)

#: While the cost estimate says "over budget", still run the reranker this often to re-measure.
PROBE_EVERY = 10
#: Weight of the newest measurement in the per-passage cost estimate.
_EWMA = 0.3


@dataclass(slots=True)
class _Candidate:
    chunk_id: str
    dense: Hit | None = None
    bm25: Hit | None = None
    rrf_rank: int | None = None
    rrf_score: float | None = None
    rerank_rank: int | None = None
    rerank_logit: float | None = None


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000.0, 3)


class HybridRetriever:
    """Retrieves the context for a question; never raises for a degraded stage."""

    def __init__(
        self,
        settings: Settings,
        *,
        embedder: Embedder,
        vector_index: VectorIndex,
        lexical_loader: Callable[[], BM25Index],
        reranker: Reranker | None,
        reranker_status: str = "",
        lexical_probe: Callable[[], str | None] | None = None,
    ) -> None:
        self.settings = settings
        self.embedder = embedder
        self.vector_index = vector_index
        self.reranker = reranker
        self.reranker_status = reranker_status or ("loaded" if reranker else "not configured")
        self._lexical_loader = lexical_loader
        # Cheap check of the artifact's live version, so an ingest run by another process is
        # picked up without a restart (one tiny file read per request).
        self._lexical_probe = lexical_probe
        self._seen_version: str | None = None
        self._lock = threading.Lock()
        self._ms_per_passage: float | None = None
        self._skipped = 0
        self.lexical: BM25Index | None = None
        self.lexical_error: str | None = None
        self.reload()

    # -- lifecycle -----------------------------------------------------------------------------
    def reload(self) -> None:
        """(Re)load the BM25 artifact, e.g. after an ingest. A bad artifact -> dense_only."""
        if self._lexical_probe is not None:
            self._seen_version = self._lexical_probe()
        try:
            lexical: BM25Index | None = self._lexical_loader()
            error = None
        except LexicalIndexError as exc:
            lexical, error = None, str(exc)
        except Exception as exc:  # an unexpected loader failure must not stop the server
            lexical, error = None, f"BM25 index failed to load: {type(exc).__name__}: {exc}"
        with self._lock:
            self.lexical, self.lexical_error = lexical, error
        if error:
            log.warning("lexical index unavailable, retrieval runs dense_only: %s", error)

    def status(self) -> dict[str, Any]:
        """For /readyz: vector store count, lexical index state, reranker state and reason."""
        try:
            vector: dict[str, Any] = {"ok": True, "count": self.vector_index.count()}
        except Exception as exc:
            vector = {"ok": False, "count": None, "error": str(exc)}
        lexical = self.lexical
        return {
            "vector_store": vector,
            "lexical_index": {
                "ok": lexical is not None,
                "chunks": len(lexical) if lexical is not None else None,
                "version": lexical.version if lexical is not None else None,
                "error": self.lexical_error,
            },
            "reranker": {
                "loaded": self.reranker is not None,
                "name": getattr(self.reranker, "name", None),
                "status": self.reranker_status,
                "budget_ms": self.settings.rerank_budget_ms,
            },
        }

    # -- retrieval -----------------------------------------------------------------------------
    def retrieve(self, question: str, k: int | None = None) -> RetrievedContext:
        """The top ``k`` (default ``context_k``) cards for ``question``, best first."""
        s = self.settings
        k = k or s.context_k
        ctx = RetrievedContext()
        t_total = time.perf_counter()
        t0 = time.perf_counter()
        try:
            qvec = self.embedder.embed_query(question)
        except Exception as exc:
            raise RetrievalError(f"embedding the question failed: {exc}") from exc
        ctx.timings_ms["embed"] = _ms(t0)

        t0 = time.perf_counter()
        try:
            dense_hits = self.vector_index.query(qvec, s.dense_top_k)
        except RetrievalError:
            raise
        except Exception as exc:
            raise RetrievalError(f"dense search failed: {exc}") from exc
        ctx.timings_ms["dense"] = _ms(t0)
        if not dense_hits:
            ctx.notes.append("knowledge base is empty: nothing retrieved")
            ctx.timings_ms["total"] = _ms(t_total)
            return ctx

        if self._lexical_probe is not None and self._lexical_probe() != self._seen_version:
            self.reload()
        path: HybridPath = "rrf_only"
        bm25_hits: list[Hit] = []
        lexical = self.lexical
        t0 = time.perf_counter()
        if lexical is None:
            path = "dense_only"
            ctx.notes.append(f"lexical index unavailable: {self.lexical_error}")
        else:
            try:
                bm25_hits = lexical.query(question, s.bm25_top_k)
            except Exception as exc:
                path = "dense_only"
                ctx.notes.append(f"lexical search failed: {type(exc).__name__}: {exc}")
                log.warning("BM25 query failed, dense_only: %s", exc)
        ctx.timings_ms["bm25"] = _ms(t0)

        cands: dict[str, _Candidate] = {
            h.chunk_id: _Candidate(h.chunk_id, dense=h) for h in dense_hits
        }
        for h in bm25_hits:
            cands.setdefault(h.chunk_id, _Candidate(h.chunk_id)).bm25 = h

        t0 = time.perf_counter()
        if path == "dense_only":
            order = [h.chunk_id for h in dense_hits]
        else:
            fused = rrf(
                [[h.chunk_id for h in dense_hits], [h.chunk_id for h in bm25_hits]],
                k=s.rrf_k,
                weights=[s.rrf_dense_weight, s.rrf_bm25_weight],
            )
            for rank, (cid, score) in enumerate(fused, start=1):
                cands[cid].rrf_rank, cands[cid].rrf_score = rank, score
            order = [cid for cid, _ in fused]
        ctx.timings_ms["fuse"] = _ms(t0)

        # Texts and metadata of the candidates we may return or rerank. The store read grows
        # with the number of ids, so without a reranker only enough for k cards is read.
        if path == "rrf_only" and self.reranker is not None:
            head = order[: max(s.rerank_top_n, k * 8)]
            records = self._read(head)
        else:
            head, records = self._read_until_cards(order, k)
        # A BM25 id the vector store no longer has (mid-ingest) is dropped, not served.
        order = [cid for cid in head if cid in records]

        if path == "rrf_only":
            order, path = self._rerank(question, order, records, cands, ctx)
        else:
            ctx.timings_ms["rerank"] = 0.0

        best = best_per_parent(order, lambda cid: records[cid].parent_id)[:k]
        ctx.chunks = [
            self._context_chunk(records[cid], cands[cid], i) for i, cid in enumerate(best, 1)
        ]
        ctx.hybrid_path = path if ctx.chunks else None
        ctx.timings_ms["total"] = _ms(t_total)
        return ctx

    def _read(self, chunk_ids: list[str]) -> dict[str, ChunkRecord]:
        try:
            return {r.chunk_id: r for r in self.vector_index.get(chunk_ids)}
        except Exception as exc:
            raise RetrievalError(f"reading chunks from the vector store failed: {exc}") from exc

    def _read_until_cards(
        self, order: list[str], k: int
    ) -> tuple[list[str], dict[str, ChunkRecord]]:
        """Read ``order`` in slices until ``k`` distinct cards are in hand (or ``k * 8`` ids)."""
        step, limit = max(2 * k, 8), min(len(order), k * 8)
        records: dict[str, ChunkRecord] = {}
        read = 0
        while read < limit:
            records.update(self._read(order[read : min(read + step, limit)]))
            read = min(read + step, limit)
            if len({r.parent_id for r in records.values()}) >= k:
                break
        return order[:read], records

    def _rerank(
        self,
        question: str,
        order: list[str],
        records: dict[str, ChunkRecord],
        cands: dict[str, _Candidate],
        ctx: RetrievedContext,
    ) -> tuple[list[str], HybridPath]:
        s = self.settings
        reranker = self.reranker
        if reranker is None:
            ctx.notes.append(f"reranker: {self.reranker_status}")
            ctx.timings_ms["rerank"] = 0.0
            return order, "rrf_only"
        top = order[: s.rerank_top_n]
        estimate = (self._ms_per_passage or 0.0) * len(top)
        if estimate > s.rerank_budget_ms and self._skipped + 1 < PROBE_EVERY:
            self._skipped += 1
            ctx.rerank_over_budget = True
            ctx.timings_ms["rerank"] = 0.0
            ctx.notes.append(
                f"reranker skipped: estimated {estimate:.0f} ms > budget {s.rerank_budget_ms} ms"
            )
            return order, "rrf_only"
        self._skipped = 0
        t0 = time.perf_counter()
        try:
            logits = reranker.score(question, [index_text(records[c]) for c in top])
            if len(logits) != len(top):
                raise ValueError(f"{len(logits)} scores for {len(top)} passages")
        except Exception as exc:
            ctx.timings_ms["rerank"] = _ms(t0)
            ctx.notes.append(f"reranker failed: {type(exc).__name__}: {exc}")
            log.warning("reranker failed, rrf_only: %s", exc)
            return order, "rrf_only"
        elapsed = _ms(t0)
        ctx.timings_ms["rerank"] = elapsed
        per = elapsed / max(1, len(top))
        prev = self._ms_per_passage
        self._ms_per_passage = per if prev is None else (1 - _EWMA) * prev + _EWMA * per
        if elapsed > s.rerank_budget_ms:
            ctx.rerank_over_budget = True
            ctx.notes.append(
                f"reranker over budget: {elapsed:.0f} ms > {s.rerank_budget_ms} ms; "
                "its scores were discarded"
            )
            return order, "rrf_only"
        # Ties in the logit keep the fused order (sort is stable).
        reranked = sorted(zip(top, logits, strict=True), key=lambda x: -x[1])
        for rank, (cid, logit) in enumerate(reranked, start=1):
            cands[cid].rerank_rank, cands[cid].rerank_logit = rank, float(logit)
        return [cid for cid, _ in reranked] + order[len(top) :], "full"

    @staticmethod
    def _context_chunk(record: ChunkRecord, cand: _Candidate, rank: int) -> ContextChunk:
        card_meta = dict(record.metadata.get("card") or {})
        return ContextChunk(
            id=record.parent_id,
            text=record.text,
            title=str(record.metadata.get("title") or card_meta.get("title") or ""),
            source=record.metadata.get("url") or None,
            metadata=card_meta,
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
