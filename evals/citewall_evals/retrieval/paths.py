"""Rank labelled questions by each retrieval method, through the production retriever's stages.

- ``dense``, ``bm25``: one stage alone (``HybridRetriever.dense`` / ``lexical_hits``);
- ``rrf``: their fusion as configured (``HybridRetriever.fuse``); fusion tuning re-runs the same
  pure ``rrf`` with other parameters;
- ``full``: ``HybridRetriever.retrieve`` with a cross-encoder and no time budget, so it is
  exactly the production full path (rerank of the fused top, dedupe by card);
- ``served``: ``retrieve`` as configured; its label says what really ran.

Chunk rankings become card rankings the way the retriever makes them (best chunk per card).
Each stage runs for a reader: ``Readers``, one ``CardFilter`` for every question (every card by
default: the staff view) or one per question (``citewall eval kb`` asks each as its member).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from citewall.errors import UserError
from citewall.kb.audiences import EVERY_CARD, CardFilter
from citewall.retrieval.dedupe import best_per_parent
from citewall.retrieval.fusion import rrf
from citewall.retrieval.protocols import Reranker
from citewall.retrieval.retriever import HybridRetriever
from citewall_evals.questions import Question
from citewall_evals.retrieval.metrics import CUTOFF, PathScores, score_rankings

#: Grid searched on the dev split (dense weight fixed at 1.0: only the ratio matters).
RRF_K_GRID = (5, 10, 20, 40, 60, 100)
BM25_WEIGHT_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)
#: A budget no rerank reaches: evaluation measures the ranking, not the deadline.
NO_BUDGET_MS = 10**9

#: Who each question is retrieved for: one filter for all, or one per question, in order.
Readers = CardFilter | Sequence[CardFilter]


def per_question(cards: Readers, questions: Sequence[Question]) -> list[CardFilter]:
    """The filter of each question; a per-question list must match the questions one to one."""
    if isinstance(cards, CardFilter):
        return [cards] * len(questions)
    if len(cards) != len(questions):
        raise ValueError(f"{len(cards)} card filters for {len(questions)} questions")
    return list(cards)


@dataclass(slots=True)
class StageRuns:
    """Per question, the dense and BM25 chunk rankings (ids); the chunk -> card map."""

    dense: list[list[str]] = field(default_factory=list)
    bm25: list[list[str]] = field(default_factory=list)
    parent: dict[str, str] = field(default_factory=dict)
    #: Why BM25 did not run (a deployment without its lexical index), or None.
    lexical_problem: str | None = None

    def cards(self, chunk_ids: Sequence[str]) -> list[str]:
        """Card ranking of a chunk ranking: the best chunk of each card, in order."""
        known = [c for c in chunk_ids if c in self.parent]
        return [self.parent[c] for c in best_per_parent(known, self.parent.__getitem__)]


def stage_runs(
    retriever: HybridRetriever,
    questions: Sequence[Question],
    *,
    lexical_required: bool = True,
    cards: Readers = EVERY_CARD,
) -> StageRuns:
    """Run the dense and BM25 stages once per question (fusion is then cheap to re-run), each
    for its reader ``cards``.

    A BM25 stage that cannot run is a ``UserError``; without ``lexical_required`` it is
    recorded (``lexical_problem``) and BM25 ranks nothing, as in the served ``dense_only``."""
    runs = StageRuns()
    for q, reader in zip(questions, per_question(cards, questions), strict=True):
        runs.dense.append(
            [h.chunk_id for h in retriever.dense(retriever.embed(q.question), cards=reader)]
        )
        hits, problem = retriever.lexical_hits(q.question, cards=reader)
        if problem and lexical_required:
            raise UserError(f"cannot evaluate BM25: {problem}")
        runs.lexical_problem = runs.lexical_problem or problem
        runs.bm25.append([h.chunk_id for h in hits])
    ids = sorted({c for ranking in runs.dense + runs.bm25 for c in ranking})
    runs.parent = {cid: r.parent_id for cid, r in retriever.read(ids).items()}
    return runs


def fused_rankings(runs: StageRuns, k: int, w_dense: float, w_bm25: float) -> list[list[str]]:
    """Card rankings of the weighted RRF of each question's two stage rankings."""
    return [
        runs.cards([c for c, _ in rrf([d, b], k=k, weights=[w_dense, w_bm25])])
        for d, b in zip(runs.dense, runs.bm25, strict=True)
    ]


def tune_fusion(runs: StageRuns, questions: Sequence[Question]) -> dict[str, Any]:
    """Grid search (k, BM25 weight) on nDCG@10; ties go to the larger k, then lower weight."""
    golds = [q.gold for q in questions]
    best: tuple[float, int, float] | None = None
    best_cfg: dict[str, Any] = {}
    grid: list[dict[str, float]] = []
    for k in RRF_K_GRID:
        for w in BM25_WEIGHT_GRID:
            m = score_rankings("rrf", fused_rankings(runs, k, 1.0, w), golds)
            grid.append({"rrf_k": k, "rrf_bm25_weight": w, "ndcg@10": round(m.ndcg_at_10, 4)})
            key = (round(m.ndcg_at_10, 6), k, -w)
            if best is None or key > best:
                best = key
                best_cfg = {"rrf_k": k, "rrf_dense_weight": 1.0, "rrf_bm25_weight": w}
                best_cfg.update(m.as_dict())
    return {**best_cfg, "grid": grid}


def with_reranker(retriever: HybridRetriever, reranker: Reranker) -> HybridRetriever:
    """The same indexes and embedder with ``reranker`` and no time budget."""
    return HybridRetriever(
        replace(retriever.fusion, rerank_budget_ms=NO_BUDGET_MS),
        embedder=retriever.embedder,
        vector_index=retriever.vector_index,
        lexical=retriever.lexical,
        reranker=reranker,
        reranker_status="evaluation",
    )


def served_rankings(
    retriever: HybridRetriever, questions: Sequence[Question], cards: Readers = EVERY_CARD
) -> tuple[list[list[str]], str]:
    """Card rankings from ``retrieve`` itself (for the reader ``cards`` stands for: every card
    by default), and the hybrid paths that ran (joined by '/')."""
    readers = per_question(cards, questions)
    contexts = [
        retriever.retrieve(q.question, k=CUTOFF, cards=reader)
        for q, reader in zip(questions, readers, strict=True)
    ]
    paths = "/".join(sorted({str(c.hybrid_path) for c in contexts}))
    return [[c.id for c in ctx.chunks] for ctx in contexts], paths


def evaluate_paths(
    retriever: HybridRetriever,
    questions: Sequence[Question],
    runs: StageRuns | None = None,
    *,
    reranker: Reranker | None = None,
    served: bool = True,
    lexical_required: bool = True,
    cards: Readers = EVERY_CARD,
) -> dict[str, PathScores]:
    """Scores of ``dense``, ``bm25``, ``rrf``, ``full`` (with ``reranker``, else the
    retriever's own, when there is one) and, with ``served``, ``retrieve`` as configured,
    every path retrieving for the reader(s) ``cards`` (every card by default).
    Without ``lexical_required``, a BM25 stage that cannot run scores ``bm25`` and ``rrf``
    as ranking nothing, labelled with why."""
    runs = runs or stage_runs(retriever, questions, lexical_required=lexical_required, cards=cards)
    reranker = reranker or retriever.reranker
    golds = [q.gold for q in questions]
    s = retriever.fusion
    out = {
        "dense": score_rankings("dense", [runs.cards(d) for d in runs.dense], golds),
        "bm25": score_rankings("bm25", [runs.cards(b) for b in runs.bm25], golds),
        "rrf": score_rankings(
            "rrf", fused_rankings(runs, s.rrf_k, s.rrf_dense_weight, s.rrf_bm25_weight), golds
        ),
    }
    if runs.lexical_problem:
        unavailable = f"unavailable: {runs.lexical_problem}"
        out["bm25"] = score_rankings("bm25", [[] for _ in questions], golds, label=unavailable)
        out["rrf"] = score_rankings("rrf", [[] for _ in questions], golds, label=unavailable)
    if reranker is not None:
        full, label = served_rankings(with_reranker(retriever, reranker), questions, cards)
        out["full"] = score_rankings("full", full, golds, label=label)
    if served:
        rankings, label = served_rankings(retriever, questions, cards)
        out["served"] = score_rankings("served", rankings, golds, label=label)
    return out
