"""``citewall eval retrieval``: every method on a labelled split over a throwaway index.

The KB is ingested into a temporary data dir (the live indexes are never touched), fusion is
tuned on the dev split, and each method is scored on the chosen split through the production
retriever's stages (``paths``). ANN recall compares the vector store with an exact search over
the same vectors, for the questions and every chunk title.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from citewall.config import Settings
from citewall.ingest.pipeline import ingest_paths
from citewall.retrieval.factory import build_retriever
from citewall.retrieval.protocols import Embedder, Reranker
from citewall.retrieval.vector_index import ChromaVectorIndex
from citewall_evals.questions import load_questions
from citewall_evals.retrieval.ann import ann_recall
from citewall_evals.retrieval.metrics import score_rankings
from citewall_evals.retrieval.paths import (
    evaluate_paths,
    fused_rankings,
    stage_runs,
    tune_fusion,
)


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
    dev_q = load_questions(dev)
    eval_q = load_questions(test) if split == "test" else dev_q
    with tempfile.TemporaryDirectory(prefix="citewall-eval-") as tmp:
        s = settings.model_copy(
            update={"data_dir": Path(tmp), "database_url": None, "chroma_url": None}
        )
        report = ingest_paths(kb, s, embedder=embedder, progress=False)
        retriever = build_retriever(s, embedder=embedder, reranker=None)
        tuned = tune_fusion(stage_runs(retriever, dev_q), dev_q)
        runs = stage_runs(retriever, eval_q)
        golds = [q.gold for q in eval_q]
        scores = evaluate_paths(retriever, eval_q, runs, reranker=reranker, served=False)
        methods: dict[str, Any] = {
            "dense": scores["dense"].as_dict(),
            "bm25": scores["bm25"].as_dict(),
            "rrf_configured": scores["rrf"].as_dict(),
            "rrf_tuned": score_rankings(
                "rrf_tuned",
                fused_rankings(runs, tuned["rrf_k"], 1.0, tuned["rrf_bm25_weight"]),
                golds,
            ).as_dict(),
            "rrf_plain_k60": score_rankings(
                "rrf_plain_k60", fused_rankings(runs, 60, 1.0, 1.0), golds
            ).as_dict(),
            "full": scores["full"].as_dict()
            if "full" in scores
            else f"unavailable: {reranker_status}",
        }
        index = retriever.vector_index
        assert isinstance(index, ChromaVectorIndex)
        records, matrix = index.all_chunks(with_embeddings=True)
        titles = [str(r.metadata.get("title", "")) for r in records]
        queries = [q.question for q in dev_q + eval_q] + titles
        ann = ann_recall(
            index, [r.chunk_id for r in records], matrix, [embedder.embed_query(t) for t in queries]
        )
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
