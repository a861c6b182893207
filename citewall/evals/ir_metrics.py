"""Retrieval metrics (nDCG@k, recall@k, MRR) and their per-path evaluation on a labelled split.

The metric functions are pure and binary-relevance: a card is relevant when it is in the
question's ``gold`` list. Rankings are card ids, best first, already deduplicated by card.

``evaluate_retrieval_paths`` ranks each question four ways through the live retriever's own
parts: ``dense`` (Chroma alone), ``bm25`` (bm25s alone), ``rrf`` (their weighted reciprocal-rank
fusion with the configured k and weights) and ``served`` (``retriever.retrieve``, whose label
says what really ran: ``full`` when the cross-encoder reranked, ``rrf_only`` otherwise).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from citewall.retrieval.dedupe import best_per_parent
from citewall.retrieval.fusion import rrf


def dcg_at_k(ranking: Sequence[str], relevant: frozenset[str] | set[str], k: int) -> float:
    """Sum of 1/log2(rank+1) over relevant ids in the top ``k`` (binary gains)."""
    return sum(1.0 / math.log2(i + 2) for i, cid in enumerate(ranking[:k]) if cid in relevant)


def ndcg_at_k(ranking: Sequence[str], relevant: Iterable[str], k: int = 10) -> float:
    """DCG of ``ranking`` over the DCG of a perfect ranking; 0.0 when nothing is relevant.

    >>> ndcg_at_k(["a", "b"], {"a"})
    1.0
    >>> round(ndcg_at_k(["b", "a"], {"a"}), 4)
    0.6309
    """
    rel = frozenset(relevant)
    if not rel:
        return 0.0
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(rel), k)))
    return dcg_at_k(ranking, rel, k) / ideal


def recall_at_k(ranking: Sequence[str], relevant: Iterable[str], k: int = 10) -> float:
    """Share of the relevant ids found in the top ``k``; 0.0 when nothing is relevant."""
    rel = frozenset(relevant)
    if not rel:
        return 0.0
    return len(rel & set(ranking[:k])) / len(rel)


def reciprocal_rank(ranking: Sequence[str], relevant: Iterable[str]) -> float:
    """1/rank of the first relevant id, 0.0 when none is ranked."""
    rel = frozenset(relevant)
    for i, cid in enumerate(ranking):
        if cid in rel:
            return 1.0 / (i + 1)
    return 0.0


@dataclass(frozen=True, slots=True)
class PathScores:
    """Mean metrics of one path over a split; ``label`` is what really ran (served path)."""

    path: str
    ndcg_at_10: float
    recall_at_10: float
    mrr: float
    questions: int
    label: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "ndcg@10": self.ndcg_at_10,
            "recall@10": self.recall_at_10,
            "mrr": self.mrr,
            "questions": self.questions,
            "label": self.label,
        }


def score_rankings(
    path: str, rankings: Sequence[Sequence[str]], golds: Sequence[Iterable[str]], label: str = ""
) -> PathScores:
    """Mean nDCG@10, recall@10 and MRR of ``rankings[i]`` against ``golds[i]``."""
    if len(rankings) != len(golds):
        raise ValueError(f"{len(rankings)} rankings for {len(golds)} gold lists")
    golds = [frozenset(g) for g in golds]
    n = len(rankings)
    return PathScores(
        path=path,
        ndcg_at_10=fmean(ndcg_at_k(r, g, 10) for r, g in zip(rankings, golds, strict=True))
        if n
        else 0.0,
        recall_at_10=fmean(recall_at_k(r, g, 10) for r, g in zip(rankings, golds, strict=True))
        if n
        else 0.0,
        mrr=fmean(reciprocal_rank(r, g) for r, g in zip(rankings, golds, strict=True))
        if n
        else 0.0,
        questions=n,
        label=label,
    )


def _cards(chunk_ids: Sequence[str], parent_of: Callable[[str], str], k: int) -> list[str]:
    return [parent_of(c) for c in best_per_parent(chunk_ids, parent_of)][:k]


def evaluate_retrieval_paths(
    retriever: Any, questions: Sequence[dict[str, Any]], k: int = 10
) -> dict[str, PathScores]:
    """Rank every question by dense, BM25, RRF and the served path; score against gold.

    ``retriever`` is a ``HybridRetriever`` (its ``embedder``, ``vector_index``, ``lexical``
    and ``settings`` are read, nothing is changed).
    """
    s = retriever.settings
    depth = max(s.dense_top_k, s.bm25_top_k, k * 8)
    parents: dict[str, str] = {}

    def parent_of(chunk_id: str) -> str:
        return parents.get(chunk_id, chunk_id.split("#", 1)[0])

    per_path: dict[str, list[list[str]]] = {"dense": [], "bm25": [], "rrf": [], "served": []}
    labels: set[str] = set()
    for q in questions:
        text = str(q["question"])
        dense = [
            h.chunk_id
            for h in retriever.vector_index.query(retriever.embedder.embed_query(text), depth)
        ]
        lexical = retriever.lexical
        bm25 = [h.chunk_id for h in lexical.query(text, depth)] if lexical is not None else []
        unknown = [c for c in {*dense, *bm25} if c not in parents]
        if unknown:
            for record in retriever.vector_index.get(unknown):
                parents[record.chunk_id] = record.parent_id
        fused = [
            cid
            for cid, _ in rrf(
                [dense, bm25], k=s.rrf_k, weights=[s.rrf_dense_weight, s.rrf_bm25_weight]
            )
        ]
        served = retriever.retrieve(text, k=k)
        labels.add(str(served.hybrid_path))
        per_path["dense"].append(_cards(dense, parent_of, k))
        per_path["bm25"].append(_cards(bm25, parent_of, k))
        per_path["rrf"].append(_cards(fused, parent_of, k))
        per_path["served"].append([c.id for c in served.chunks])
    golds = [q["gold"] for q in questions]
    return {
        path: score_rankings(
            path, rankings, golds, label="/".join(sorted(labels)) if path == "served" else path
        )
        for path, rankings in per_path.items()
    }


def evaluate_paths(retriever: Any, questions: Sequence[dict[str, Any]]) -> dict[str, PathScores]:
    """Per-path scores, computed by the retrieval stage's own evaluation code when it exists
    (``citewall.retrieval.evaluation``: the figures ``citewall eval retrieval`` prints), over
    this workspace's retriever; else by ``evaluate_retrieval_paths`` above. Adds ``full``
    (cross-encoder over the fused list) when a reranker is loaded."""
    try:
        from citewall.retrieval import evaluation as ev
    except ImportError:
        return evaluate_retrieval_paths(retriever, questions)
    qs = [
        ev.Question(str(q["id"]), str(q["question"]), tuple(q["gold"]), str(q.get("kind", "")))
        for q in questions
    ]
    s = retriever.settings
    runs = ev.stage_runs(retriever, qs)

    def cards(chunk_ids: Sequence[str]) -> list[str]:
        return _cards([c for c in chunk_ids if c in runs.parent], runs.parent.__getitem__, 10)

    def scored(path: str, rankings: Sequence[Sequence[str]], label: str) -> PathScores:
        m = ev.score(rankings, qs)
        return PathScores(path, m["ndcg@10"], m["recall@10"], m["mrr"], len(qs), label)

    out = {
        "dense": scored("dense", [cards(d) for d in runs.dense], "dense"),
        "bm25": scored("bm25", [cards(b) for b in runs.bm25], "bm25"),
        "rrf": scored(
            "rrf", ev.fused_rankings(runs, s.rrf_k, s.rrf_dense_weight, s.rrf_bm25_weight), "rrf"
        ),
    }
    if retriever.reranker is not None:
        out["full"] = scored(
            "full", ev.full_rankings(retriever, retriever.reranker, runs, qs), "full"
        )
    served = [retriever.retrieve(q.question, k=10) for q in qs]
    labels = "/".join(sorted({str(c.hybrid_path) for c in served}))
    out["served"] = scored("served", [[c.id for c in ctx.chunks] for ctx in served], labels)
    return out
