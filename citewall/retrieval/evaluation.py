"""Offline retrieval evaluation: dense, BM25, RRF and full on a labelled question set.

Questions are JSONL ``{"id", "question", "gold": [card ids], "kind"}`` over a KB that is
ingested into a throwaway data dir, so the evaluation never touches the live indexes. Each
method's ranking is computed from the same stage outputs the retriever uses (chunk rankings,
then best chunk per card), so the figures describe the production code path.
"""

from __future__ import annotations

import json
import statistics
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from citewall.config import Settings
from citewall.errors import UserError
from citewall.ingest.chunking import index_text
from citewall.retrieval.dedupe import best_per_parent
from citewall.retrieval.fusion import rrf
from citewall.retrieval.metrics import ndcg_at_k, recall_at_k, reciprocal_rank
from citewall.retrieval.protocols import Embedder, Reranker
from citewall.retrieval.retriever import HybridRetriever

CUTOFF = 10
#: Grid searched on the dev split (dense weight fixed at 1.0: only the ratio matters).
RRF_K_GRID = (5, 10, 20, 40, 60, 100)
BM25_WEIGHT_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    question: str
    gold: tuple[str, ...]
    kind: str = ""


def load_questions(path: Path) -> list[Question]:
    """Read a labelled split; a bad line raises ``UserError`` naming file and line."""
    out: list[Question] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            out.append(
                Question(
                    str(raw["id"]),
                    str(raw["question"]),
                    tuple(raw["gold"]),
                    str(raw.get("kind", "")),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise UserError(f"{path}:{n}: not a labelled question ({exc})") from None
    return out


@dataclass(slots=True)
class StageRuns:
    """Per question: dense and BM25 chunk rankings (ids), chunk -> card map."""

    dense: list[list[str]] = field(default_factory=list)
    bm25: list[list[str]] = field(default_factory=list)
    parent: dict[str, str] = field(default_factory=dict)


def stage_runs(retriever: HybridRetriever, questions: Sequence[Question]) -> StageRuns:
    """Run the dense and BM25 stages once per question (fusion is then cheap to re-run)."""
    s = retriever.settings
    runs = StageRuns()
    lexical = retriever.lexical
    if lexical is None:
        raise UserError(f"no BM25 index to evaluate: {retriever.lexical_error}")
    for q in questions:
        vec = retriever.embedder.embed_query(q.question)
        runs.dense.append([h.chunk_id for h in retriever.vector_index.query(vec, s.dense_top_k)])
        runs.bm25.append([h.chunk_id for h in lexical.query(q.question, s.bm25_top_k)])
    all_ids = {c for r in runs.dense + runs.bm25 for c in r}
    runs.parent = {r.chunk_id: r.parent_id for r in retriever.vector_index.get(sorted(all_ids))}
    return runs


def _cards(chunk_ids: Sequence[str], parent: dict[str, str]) -> list[str]:
    kept = best_per_parent([c for c in chunk_ids if c in parent], lambda c: parent[c])
    return [parent[c] for c in kept]


def score(rankings: Sequence[Sequence[str]], questions: Sequence[Question]) -> dict[str, float]:
    """Mean nDCG@10, recall@10 and MRR of card rankings against the gold labels."""
    g = [set(q.gold) for q in questions]
    return {
        "ndcg@10": statistics.fmean(
            ndcg_at_k(r, x, CUTOFF) for r, x in zip(rankings, g, strict=True)
        ),
        "recall@10": statistics.fmean(
            recall_at_k(r, x, CUTOFF) for r, x in zip(rankings, g, strict=True)
        ),
        "mrr": statistics.fmean(reciprocal_rank(r, x) for r, x in zip(rankings, g, strict=True)),
    }


def fused_rankings(runs: StageRuns, k: int, w_dense: float, w_bm25: float) -> list[list[str]]:
    return [
        _cards([c for c, _ in rrf([d, b], k=k, weights=[w_dense, w_bm25])], runs.parent)
        for d, b in zip(runs.dense, runs.bm25, strict=True)
    ]


def tune_fusion(runs: StageRuns, questions: Sequence[Question]) -> dict[str, Any]:
    """Grid search (k, BM25 weight) on nDCG@10; ties go to the larger k, then lower weight."""
    best: tuple[float, float, float] | None = None
    best_cfg: dict[str, Any] = {}
    grid: list[dict[str, float]] = []
    for k in RRF_K_GRID:
        for w in BM25_WEIGHT_GRID:
            m = score(fused_rankings(runs, k, 1.0, w), questions)
            grid.append({"rrf_k": k, "rrf_bm25_weight": w, "ndcg@10": round(m["ndcg@10"], 4)})
            key = (round(m["ndcg@10"], 6), k, -w)
            if best is None or key > best:
                best, best_cfg = (
                    key,
                    {"rrf_k": k, "rrf_dense_weight": 1.0, "rrf_bm25_weight": w, **m},
                )
    return {**best_cfg, "grid": grid}


def full_rankings(
    retriever: HybridRetriever,
    reranker: Reranker,
    runs: StageRuns,
    questions: Sequence[Question],
) -> list[list[str]]:
    """Fused top ``rerank_top_n`` reranked by the cross-encoder, then the rest in fused order."""
    s = retriever.settings
    out = []
    for q, d, b in zip(questions, runs.dense, runs.bm25, strict=True):
        fused = [
            c for c, _ in rrf([d, b], k=s.rrf_k, weights=[s.rrf_dense_weight, s.rrf_bm25_weight])
        ]
        top = fused[: s.rerank_top_n]
        recs = {r.chunk_id: r for r in retriever.vector_index.get(top)}
        top = [c for c in top if c in recs]
        logits = reranker.score(q.question, [index_text(recs[c]) for c in top])
        order = [c for c, _ in sorted(zip(top, logits, strict=True), key=lambda x: -x[1])]
        out.append(_cards(order + fused[len(top) :], runs.parent))
    return out


def ann_recall(retriever: HybridRetriever, queries: Sequence[str], k: int = CUTOFF) -> float:
    """Mean overlap of Chroma's top-k with an exact dot-product top-k over every vector."""
    index = retriever.vector_index
    records, matrix = index.all_chunks(with_embeddings=True)  # type: ignore[attr-defined]
    ids = np.array([r.chunk_id for r in records])
    hits = []
    for text in queries:
        vec = retriever.embedder.embed_query(text)
        exact = set(ids[np.argsort(-(matrix @ vec), kind="stable")[:k]])
        approx = {h.chunk_id for h in index.query(vec, k)}
        hits.append(len(exact & approx) / min(k, len(ids)))
    return statistics.fmean(hits) if hits else 0.0


def evaluate(
    settings: Settings,
    *,
    kb: Sequence[Path],
    dev: Path,
    test: Path,
    split: str,
    embedder: Embedder,
    reranker: Reranker | None,
    reranker_status: str,
) -> dict[str, Any]:
    """Ingest ``kb`` into a temp dir, tune fusion on dev, report every method on ``split``."""
    from citewall.ingest.pipeline import ingest_paths
    from citewall.retrieval.factory import build_retriever

    with tempfile.TemporaryDirectory(prefix="citewall-eval-") as tmp:
        s = settings.model_copy(
            update={"data_dir": Path(tmp), "database_url": None, "chroma_url": None}
        )
        report = ingest_paths(kb, s, embedder=embedder, progress=False)
        retriever = build_retriever(s, embedder=embedder, reranker=None)
        dev_q, eval_q = load_questions(dev), load_questions(test if split == "test" else dev)
        tuned = tune_fusion(stage_runs(retriever, dev_q), dev_q)
        runs = stage_runs(retriever, eval_q)
        methods: dict[str, Any] = {
            "dense": score([_cards(d, runs.parent) for d in runs.dense], eval_q),
            "bm25": score([_cards(b, runs.parent) for b in runs.bm25], eval_q),
            "rrf_configured": score(
                fused_rankings(runs, s.rrf_k, s.rrf_dense_weight, s.rrf_bm25_weight), eval_q
            ),
            "rrf_tuned": score(
                fused_rankings(runs, tuned["rrf_k"], 1.0, tuned["rrf_bm25_weight"]), eval_q
            ),
            "rrf_plain_k60": score(fused_rankings(runs, 60, 1.0, 1.0), eval_q),
        }
        if reranker is not None:
            methods["full"] = score(full_rankings(retriever, reranker, runs, eval_q), eval_q)
        else:
            methods["full"] = f"unavailable: {reranker_status}"
        titles = [r.metadata.get("title", "") for r in retriever.vector_index.all_chunks()[0]]  # type: ignore[attr-defined]
        ann = ann_recall(retriever, [q.question for q in dev_q + eval_q] + [str(t) for t in titles])
        return {
            "split": split,
            "questions": len(eval_q),
            "kb_cards": report.added,
            "settings": {
                "rrf_k": s.rrf_k,
                "rrf_dense_weight": s.rrf_dense_weight,
                "rrf_bm25_weight": s.rrf_bm25_weight,
                "dense_top_k": s.dense_top_k,
                "bm25_top_k": s.bm25_top_k,
            },
            "tuned_on_dev": tuned,
            "methods": methods,
            "ann_recall@10": ann,
        }
