"""Retrieval latency per stage and corpus size, and ingest throughput against the embedding floor.

Latency corpus: N synthetic chunks (``corpus``). Up to ``real_pool`` of them are embedded for
real; larger corpora reuse those vectors plus small Gaussian noise, renormalised (index latency
depends on count and dimension, not on the vectors' meaning; the 50k build would otherwise
spend ~8 min embedding). Queries are the labelled questions, so query embedding, BM25 and
rerank costs are real. Each query runs through ``HybridRetriever.retrieve`` itself.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from citewall.config import Settings
from citewall.ingest.loaders import load_cards
from citewall.ingest.pipeline import ingest_cards
from citewall.kb.audiences import EVERY_CARD
from citewall.kb.card import Card
from citewall.retrieval.factory import fusion_settings
from citewall.retrieval.lexical_index import load_bm25, save_bm25
from citewall.retrieval.protocols import Embedder, LexicalIndex, Reranker
from citewall.retrieval.records import index_text
from citewall.retrieval.reloading import ReloadingArtifact
from citewall.retrieval.retriever import HybridRetriever
from citewall.retrieval.vector_index import ChromaVectorIndex
from citewall.storage.schema import open_database
from citewall_evals.bench.corpus import chunk_records, synthetic_cards
from citewall_evals.bench.stats import p50_p95
from citewall_evals.questions import load_questions
from citewall_evals.retrieval.ann import ann_recall

STAGES = ("embed", "dense", "bm25", "fuse", "rerank", "total")
#: A budget no rerank reaches: the full path is measured, not its over-budget fallback.
NO_BUDGET_MS = 60_000


def latency_at(
    size: int,
    *,
    settings: Settings,
    demo: Sequence[Card],
    questions: Sequence[str],
    embedder: Embedder,
    reranker: Reranker | None,
    real_pool: int,
    rounds: int,
) -> dict[str, Any]:
    """Build an N-chunk index in a temp dir; p50/p95 per stage for rrf_only and full."""
    records = chunk_records(synthetic_cards(demo, size))
    texts = [index_text(r) for r in records]
    pool = embedder.embed_documents(texts[: min(real_pool, size)])
    rng = np.random.default_rng(7)
    vecs = pool[np.arange(size) % len(pool)] + rng.normal(0, 0.02, (size, pool.shape[1]))
    vecs[: len(pool)] = pool
    vecs = (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)
    out: dict[str, Any] = {"chunks": size}
    with tempfile.TemporaryDirectory(prefix="citewall-bench-") as tmp:
        t0 = time.perf_counter()
        index = ChromaVectorIndex.persistent(Path(tmp) / "chroma", "bench")
        index.upsert(records, vecs)
        out["build_vector_s"] = round(time.perf_counter() - t0, 2)
        t0 = time.perf_counter()
        save_bm25(Path(tmp) / "bm25", [r.chunk_id for r in records], texts)
        out["build_bm25_s"] = round(time.perf_counter() - t0, 2)
        # ANN recall@10 of Chroma's HNSW vs an exact scan over the same vectors.
        out["ann_recall@10"] = round(
            ann_recall(
                index,
                [r.chunk_id for r in records],
                vecs,
                [embedder.embed_query(q) for q in questions],
            ),
            4,
        )
        lexical: ReloadingArtifact[LexicalIndex] = ReloadingArtifact(
            partial(load_bm25, Path(tmp) / "bm25")
        )
        modes = {"rrf_only": None, "full": reranker} if reranker else {"rrf_only": None}
        for mode, rr in modes.items():
            retriever = HybridRetriever(
                replace(fusion_settings(settings), rerank_budget_ms=NO_BUDGET_MS),
                embedder=embedder,
                vector_index=index,
                lexical=lexical,
                reranker=rr,
            )
            timings: dict[str, list[float]] = {k: [] for k in STAGES}
            qs = list(questions) * rounds if mode == "rrf_only" else list(questions)[:20]
            retriever.retrieve(qs[0], cards=EVERY_CARD)  # warm caches
            for q in qs:
                ctx = retriever.retrieve(q, cards=EVERY_CARD)
                assert ctx.hybrid_path == mode, (ctx.hybrid_path, ctx.notes)
                for k in STAGES:
                    timings[k].append(ctx.timings_ms.get(k, 0.0))
            out[mode] = {k: p50_p95(v) for k, v in timings.items()}
            out[mode]["queries"] = len(qs)
    return out


def ingest_throughput(
    settings: Settings, demo: Sequence[Card], embedder: Embedder, n: int
) -> dict[str, Any]:
    """Full incremental ingest of ``n`` synthetic cards vs embedding the same texts alone."""
    cards = synthetic_cards(demo, n, seed=11)
    texts = [index_text(r) for r in chunk_records(cards)]
    t0 = time.perf_counter()
    embedder.embed_documents(texts)
    floor = time.perf_counter() - t0
    with tempfile.TemporaryDirectory(prefix="citewall-bench-ingest-") as tmp:
        s = settings.model_copy(
            update={"data_dir": Path(tmp), "database_url": None, "chroma_url": None}
        )
        db = open_database(s.sqlalchemy_url)
        t0 = time.perf_counter()
        report = ingest_cards(
            cards, s, embedder=embedder, session_factory=db.sessions, progress=False
        )
        total = time.perf_counter() - t0
        db.dispose()
    return {
        "cards": n,
        "chunks": report.chunks_embedded,
        "embedding_floor_s": round(floor, 2),
        "ingest_s": round(total, 2),
        "ratio_to_floor": round(total / floor, 3),
        "chunks_per_s": round(report.chunks_embedded / total, 1),
    }


def run(
    settings: Settings,
    *,
    sizes: Sequence[int],
    demo_path: Path,
    questions_path: Path,
    embedder: Embedder,
    reranker: Reranker | None,
    reranker_name: str,
    ingest_cards_n: int,
    real_pool: int = 1000,
    rounds: int = 2,
) -> dict[str, Any]:
    """Latency at every size, then (unless ``ingest_cards_n`` is 0) ingest throughput."""
    demo = load_cards([demo_path]).cards
    questions = [q.question for q in load_questions(questions_path)][:50]
    result: dict[str, Any] = {
        "reranker": reranker_name,
        "torch_threads": settings.torch_threads,
        "rerank_top_n": settings.rerank_top_n,
        "reranker_max_length": settings.reranker_max_length,
        "reranker_precision": settings.reranker_precision,
        "sizes": [],
    }
    for size in sizes:
        result["sizes"].append(
            latency_at(
                size,
                settings=settings,
                demo=demo,
                questions=questions,
                embedder=embedder,
                reranker=reranker,
                real_pool=real_pool,
                rounds=rounds,
            )
        )
    if ingest_cards_n:
        result["ingest"] = ingest_throughput(settings, demo, embedder, ingest_cards_n)
    return result


def to_markdown(result: dict[str, Any]) -> str:
    """The result as Markdown tables (ms)."""
    lines = [
        f"reranker: {result['reranker']} (top {result['rerank_top_n']}, max_length "
        f"{result['reranker_max_length']}, precision {result['reranker_precision']})",
        "",
        "| chunks | path | " + " | ".join(f"{s} p50/p95" for s in STAGES) + " |",
        "|---|---|" + "---|" * len(STAGES),
    ]
    ann_notes: list[str] = []
    for row in result["sizes"]:
        ann_notes.append(f"ANN recall@10 at {row['chunks']}: {row.get('ann_recall@10')}")
        for mode in ("rrf_only", "full"):
            if mode in row:
                cells = [f"{row[mode][s]['p50']}/{row[mode][s]['p95']}" for s in STAGES]
                lines.append(f"| {row['chunks']} | {mode} | " + " | ".join(cells) + " |")
    lines += ["", *ann_notes]
    if "ingest" in result:
        i = result["ingest"]
        lines += [
            "",
            f"ingest: {i['chunks']} chunks in {i['ingest_s']} s "
            f"({i['chunks_per_s']} chunks/s); embedding alone {i['embedding_floor_s']} s; "
            f"ratio {i['ratio_to_floor']}",
        ]
    return "\n".join(lines) + "\n"
