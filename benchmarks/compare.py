"""citewall side by side with the LangChain pipeline users would assemble instead.

One process, same corpus, same models, same queries; calls alternate query by query (and the
order rotates) so machine drift lands on both sides. Writes ``docs/perf/compare.json``,
``docs/perf/compare.md`` and ``docs/perf/latency_vs_size.png``.

    python benchmarks/compare.py                         # 1k, 10k, 50k chunks, 50 queries
    python benchmarks/compare.py --sizes 1000 --queries 20 --rerank-queries 5 --ingest-cards 200

Needs the ``bench`` extra (``pip install -e '.[bench]'``). The latency corpus comes from the
retrieval bench's helpers (``citewall.retrieval.benchmark``): N one-chunk cards recombined from
the demo KB; the first ``--real-pool`` are embedded for real, the rest reuse those vectors plus
small noise (index latency depends on count and dimension, not meaning). Quality is measured on
the demo KB itself with the labelled test split.
"""

from __future__ import annotations

import os

# Before numpy loads: a multi-threaded BLAS matvec (the exact-scan floor at >= 10k vectors)
# leaves OpenBLAS threads spinning after it returns, and on 2 cores they slowed whatever ran
# next (the next query embedding by ~10 ms). One thread, like the torch side.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import replace  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.baselines.langchain_pipeline import (  # noqa: E402
    LangChainModels,
    LangChainPipeline,
    Passage,
    build_pipeline,
    card_ranking,
    load_models,
)
from benchmarks.baselines.report import (  # noqa: E402
    CW_FULL,
    CW_FULL_BEFORE,
    CW_RRF,
    CW_RRF_BEFORE,
    FLOOR_EMBED,
    FLOOR_EMBED_CW,
    FLOOR_SCAN,
    LC_DENSE,
    LC_ENS,
    LC_RR,
    chart,
    goals,
    to_markdown,
)
from citewall.config import Settings, load_settings  # noqa: E402
from citewall.ingest.chunking import chunk_card  # noqa: E402
from citewall.kb.audiences import EVERY_CARD  # noqa: E402
from citewall.kb.card import Card  # noqa: E402
from citewall.retrieval.factory import fusion_settings  # noqa: E402
from citewall.retrieval.protocols import Embedder, Reranker  # noqa: E402
from citewall.retrieval.records import ChunkRecord, index_text  # noqa: E402
from citewall.retrieval.reloading import ReloadingArtifact  # noqa: E402
from citewall.retrieval.retriever import FusionSettings  # noqa: E402
from citewall_evals.bench.corpus import chunk_records, synthetic_cards  # noqa: E402
from citewall_evals.bench.stats import p50_p95  # noqa: E402
from citewall_evals.retrieval.metrics import ndcg_at_k, recall_at_k  # noqa: E402

OUT = REPO / "docs" / "perf"


def _stats(ms: Sequence[float]) -> dict[str, float]:
    return {**p50_p95(ms), "mean": round(statistics.fmean(ms), 2), "n": len(ms)}


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1000.0, out


def _alternate(calls: dict[str, Callable[[str], Any]], queries: Sequence[str]) -> dict[str, Any]:
    """Every call once per query; ms per call name.

    The order rotates per query and is reversed every other cycle, so no call always follows
    the same other call (a call can leave work behind, e.g. spinning BLAS threads).
    """
    names = list(calls)
    for name in names:  # warm caches (Chroma segments, tokenizer, torch allocations)
        calls[name](queries[0])
    ms: dict[str, list[float]] = {n: [] for n in names}
    for i, q in enumerate(queries):
        shift = i % len(names)
        order = names[shift:] + names[:shift]
        for name in order[::-1] if (i // len(names)) % 2 else order:
            ms[name].append(_timed(partial(calls[name], q))[0])
    return {n: _stats(v) for n, v in ms.items()}


def _passages(records: Sequence[ChunkRecord]) -> list[Passage]:
    return [Passage(r.chunk_id, r.parent_id, index_text(r)) for r in records]


#: The bench must time what the full path costs, never a skipped rerank.
BENCH_BUDGET_MS = 600_000


def _tmp_settings(settings: Settings, data_dir: Path) -> Settings:
    return settings.model_copy(
        update={
            "data_dir": data_dir,
            "database_url": None,
            "chroma_url": None,
            "rerank_budget_ms": BENCH_BUDGET_MS,
        }
    )


def bench_fusion(settings: Settings) -> FusionSettings:
    """The retriever's settings as the bench runs them: the configured ones, unbudgeted."""
    return replace(fusion_settings(settings), rerank_budget_ms=BENCH_BUDGET_MS)


def _exact_scan(vecs: npt.NDArray[np.float32], k: int) -> Callable[[npt.NDArray[np.float32]], Any]:
    def scan(qv: npt.NDArray[np.float32]) -> Any:
        scores = vecs @ qv
        top = np.argpartition(-scores, min(k, len(scores) - 1))[:k]
        return top[np.argsort(-scores[top])]

    return scan


def _ingest_trio(
    cards: Sequence[Card],
    settings: Settings,
    embedder: Embedder,
    models: LangChainModels,
    workdir: Path,
    rounds: int,
    floor_batch: int = 16,
) -> tuple[dict[str, Any], Settings, LangChainPipeline]:
    """Embedding floor, citewall ingest and LangChain indexing of the same cards.

    ``rounds`` times, each into fresh directories, the order rotating per round; each side's
    figure is its fastest round (the run least disturbed by the other tenants of the machine).
    """
    from citewall.ingest.pipeline import ingest_cards
    from citewall.ingest.sentences import distinct_units
    from citewall.storage.schema import open_database

    records = [r for c in cards for r in chunk_card(c, settings.chunk_max_words)]
    texts = [index_text(r) for r in records]
    # Ingest embeds each chunk and each distinct sentence unit once: the floor does both.
    units = distinct_units(r.text for r in records)
    embedder.embed_documents(texts[:64])  # the first large batch pays allocations
    ms: dict[str, list[float]] = {"floor": [], "citewall": [], "langchain": []}
    embed_s: list[float] = []
    s, lc = settings, None
    for i in range(rounds):
        s = _tmp_settings(settings, workdir / f"r{i}" / "citewall")
        db = open_database(s.sqlalchemy_url)

        def floor() -> None:
            # The floor is the FASTEST pure embedding we know: batch 16 beat citewall's 64 by
            # ~25% on one thread (less padding per batch).
            configured = getattr(embedder, "batch_size", None)
            try:
                if configured is not None:
                    embedder.batch_size = floor_batch  # type: ignore[attr-defined]
                embedder.embed_documents(texts)
                embedder.embed_documents(units)
            finally:
                if configured is not None:
                    embedder.batch_size = configured  # type: ignore[attr-defined]

        def citewall(s: Settings = s, db: Any = db) -> None:
            rep = ingest_cards(
                cards, s, embedder=embedder, session_factory=db.sessions, progress=False
            )
            embed_s.append(rep.embed_s)

        def langchain(i: int = i) -> None:
            nonlocal lc
            lc = build_pipeline(_passages(records), models, workdir / f"r{i}" / "lc")

        steps = [("floor", floor), ("citewall", citewall), ("langchain", langchain)]
        for name, step in steps[i % 3 :] + steps[: i % 3]:
            ms[name].append(_timed(step)[0])
        db.dispose()
    best = {k: min(v) for k, v in ms.items()}
    row = {
        "cards": len(cards),
        "chunks": len(records),
        "sentence_units": len(units),
        "rounds": rounds,
        "embedding_floor_s": round(best["floor"] / 1000, 2),
        "floor_batch_size": floor_batch,
        "citewall_batch_size": getattr(embedder, "batch_size", None),
        "citewall_s": round(best["citewall"] / 1000, 2),
        "langchain_s": round(best["langchain"] / 1000, 2),
        "all_rounds_s": {k: [round(x / 1000, 2) for x in v] for k, v in ms.items()},
        "citewall_embed_s": round(min(embed_s), 2),
        "citewall_over_floor": round(best["citewall"] / best["floor"], 3),
        "langchain_over_floor": round(best["langchain"] / best["floor"], 3),
        "citewall_over_langchain": round(best["citewall"] / best["langchain"], 3),
    }
    assert lc is not None
    return row, s, lc


def quality_and_demo_ingest(
    settings: Settings,
    embedder: Embedder,
    reranker: Reranker,
    models: LangChainModels,
    demo_path: Path,
    questions: Sequence[dict[str, Any]],
    ingest_rounds: int,
) -> dict[str, Any]:
    """nDCG@10 / recall@10 on the demo KB's labelled split for the four pipelines."""
    from citewall.ingest.loaders import load_cards
    from citewall.retrieval.factory import build_retriever

    with tempfile.TemporaryDirectory(prefix="citewall-compare-q-") as tmp:
        ingest, s, lc = _ingest_trio(
            load_cards([demo_path]).cards, settings, embedder, models, Path(tmp), ingest_rounds
        )
        cw_rrf = build_retriever(s, embedder=embedder, reranker=None)
        cw_full = build_retriever(s, embedder=embedder, reranker=reranker)
        rankings: dict[str, list[list[str]]] = {CW_RRF: [], CW_FULL: [], LC_ENS: [], LC_RR: []}
        calls: list[tuple[str, Callable[[str], list[str]]]] = [
            (CW_RRF, lambda t: [c.id for c in cw_rrf.retrieve(t, k=10, cards=EVERY_CARD).chunks]),
            (LC_ENS, lambda t: card_ranking(lc.ensemble.invoke(t))),
            (CW_FULL, lambda t: [c.id for c in cw_full.retrieve(t, k=10, cards=EVERY_CARD).chunks]),
            (LC_RR, lambda t: card_ranking(lc.reranked.invoke(t))),
        ]
        for i, q in enumerate(questions):
            for name, call in calls[i % 4 :] + calls[: i % 4]:
                rankings[name].append(call(q["question"]))
        # The full path must really have run (a silent rrf_only would make "full" a lie).
        assert cw_full.retrieve(questions[0]["question"], cards=EVERY_CARD).hybrid_path == "full"
    gold = [set(q["gold"]) for q in questions]
    metrics = {
        name: {
            "ndcg@10": round(
                statistics.fmean(ndcg_at_k(r, g, 10) for r, g in zip(rs, gold, strict=True)), 4
            ),
            "recall@10": round(
                statistics.fmean(recall_at_k(r, g, 10) for r, g in zip(rs, gold, strict=True)), 4
            ),
        }
        for name, rs in rankings.items()
    }
    return {"questions": len(questions), "metrics": metrics, "demo_ingest": ingest}


def latency_at(
    size: int,
    *,
    fusion: FusionSettings,
    demo: Sequence[Card],
    queries: Sequence[str],
    rerank_queries: Sequence[str],
    embedder: Embedder,
    reranker: Reranker,
    models: LangChainModels,
    pool: npt.NDArray[np.float32],
    embedder_before: Embedder | None = None,
    reranker_before: Reranker | None = None,
) -> dict[str, Any]:
    """Both stacks over the same N-chunk corpus and vectors; per-query wall-clock latency.

    ``embedder_before`` / ``reranker_before`` (the torch fp32 models) add citewall's series as
    they ran before the ONNX runtime path, beside the default ones."""
    from citewall.retrieval.lexical_index import load_bm25, save_bm25
    from citewall.retrieval.retriever import HybridRetriever
    from citewall.retrieval.vector_index import ChromaVectorIndex

    records = chunk_records(synthetic_cards(demo, size))
    texts = [index_text(r) for r in records]
    # Same construction as citewall.retrieval.benchmark.latency_at: real vectors first, then
    # those vectors plus small noise, renormalised.
    rng = np.random.default_rng(7)
    base = pool[: min(len(pool), size)]
    vecs = base[np.arange(size) % len(base)] + rng.normal(0, 0.02, (size, base.shape[1]))
    vecs[: len(base)] = base
    vecs = (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)
    row: dict[str, Any] = {"chunks": size, "build_s": {}}
    with tempfile.TemporaryDirectory(prefix="citewall-compare-") as tmp:
        t0 = time.perf_counter()
        index = ChromaVectorIndex.persistent(Path(tmp) / "chroma", "bench")
        index.upsert(records, vecs)
        save_bm25(Path(tmp) / "bm25", [r.chunk_id for r in records], texts)
        row["build_s"]["citewall"] = round(time.perf_counter() - t0, 2)
        t0 = time.perf_counter()
        lc = build_pipeline(_passages(records), models, Path(tmp) / "lc", vectors=vecs)
        row["build_s"]["langchain"] = round(time.perf_counter() - t0, 2)

        def retriever(rr: Reranker | None, emb: Embedder = embedder) -> HybridRetriever:
            return HybridRetriever(
                fusion,
                embedder=emb,
                vector_index=index,
                lexical=ReloadingArtifact(partial(load_bm25, Path(tmp) / "bm25")),
                reranker=rr,
            )

        cw_rrf, cw_full = retriever(None), retriever(reranker)
        stages: list[dict[str, float]] = []

        def cw_rrf_call(q: str) -> Any:
            ctx = cw_rrf.retrieve(q, cards=EVERY_CARD)
            stages.append(ctx.timings_ms)
            return ctx

        scan = _exact_scan(vecs, fusion.dense_top_k)
        qvecs = {q: embedder.embed_query(q) for q in queries}
        fast_calls: dict[str, Callable[[str], Any]] = {
            CW_RRF: cw_rrf_call,
            LC_DENSE: lambda q: lc.dense.invoke(q),
            LC_ENS: lambda q: lc.ensemble.invoke(q),
            FLOOR_EMBED: lambda q: models.embeddings.embed_query(q),
            FLOOR_EMBED_CW: lambda q: embedder.embed_query(q),
            FLOOR_SCAN: lambda q: scan(qvecs[q]),
        }
        slow_calls: dict[str, Callable[[str], Any]] = {
            CW_FULL: lambda q: cw_full.retrieve(q, cards=EVERY_CARD),
            LC_RR: lambda q: lc.reranked.invoke(q),
        }
        if embedder_before is not None:
            fast_calls[CW_RRF_BEFORE] = retriever(None, embedder_before).retrieve
        if reranker_before is not None:
            slow_calls[CW_FULL_BEFORE] = retriever(
                reranker_before, embedder_before or embedder
            ).retrieve
        fast = _alternate(fast_calls, queries)
        slow = _alternate(slow_calls, rerank_queries)
        paths = {
            cw_rrf.retrieve(queries[0], cards=EVERY_CARD).hybrid_path,
            cw_full.retrieve(queries[0], cards=EVERY_CARD).hybrid_path,
        }
        assert paths == {"rrf_only", "full"}, paths
    row["latency_ms"] = {**fast, **slow}
    # Where citewall's rrf_only time goes (its own per-stage timers; warm-up call excluded).
    row["citewall_rrf_only_stages_p50_ms"] = {
        k: round(statistics.median(t.get(k, 0.0) for t in stages[1:]), 2)
        for k in ("embed", "dense", "bm25", "fuse", "total")
    }
    lat = row["latency_ms"]
    row["ratios_p50"] = {
        "citewall rrf_only / langchain dense": round(lat[CW_RRF]["p50"] / lat[LC_DENSE]["p50"], 3),
        "citewall rrf_only / langchain ensemble": round(lat[CW_RRF]["p50"] / lat[LC_ENS]["p50"], 3),
        "citewall full / langchain ensemble+rerank": round(
            lat[CW_FULL]["p50"] / lat[LC_RR]["p50"], 3
        ),
        "citewall rrf_only / its query-embedding floor": round(
            lat[CW_RRF]["p50"] / lat[FLOOR_EMBED_CW]["p50"], 3
        ),
        "citewall rrf_only / (its embedding + scan floor)": round(
            lat[CW_RRF]["p50"] / (lat[FLOOR_EMBED_CW]["p50"] + lat[FLOOR_SCAN]["p50"]), 3
        ),
    }
    if CW_RRF_BEFORE in lat:
        row["ratios_p50"]["citewall rrf_only / before (torch)"] = round(
            lat[CW_RRF]["p50"] / lat[CW_RRF_BEFORE]["p50"], 3
        )
    if CW_FULL_BEFORE in lat:
        row["ratios_p50"]["citewall full / before (torch fp32)"] = round(
            lat[CW_FULL]["p50"] / lat[CW_FULL_BEFORE]["p50"], 3
        )
    return row


def _machine() -> str:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{os.cpu_count()} CPUs, load average {load}"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1000,10000,50000", help="comma-separated chunk counts")
    p.add_argument("--queries", type=int, default=50, help="test questions timed per size")
    p.add_argument("--rerank-queries", type=int, default=10, help="of those, timed with rerank")
    p.add_argument("--ingest-cards", type=int, default=500, help="synthetic ingest run; 0 skips")
    p.add_argument("--ingest-rounds", type=int, default=2, help="rounds per ingest, best kept")
    p.add_argument("--real-pool", type=int, default=1000, help="chunks embedded for real")
    p.add_argument("--demo", type=Path, default=REPO / "kb/demo/cards.jsonl")
    p.add_argument("--split", type=Path, default=REPO / "kb/eval/questions.test.jsonl")
    p.add_argument("--quality-limit", type=int, default=0, help="first N test questions (0: all)")
    p.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="torch intra-op threads for both stacks (0: torch's default). 1 by default: on a "
        "shared 2-core box, 2 threads thrash (query embedding 30 ms -> 300-1100 ms)",
    )
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)

    from citewall.config import hf_offline_env
    from citewall.ingest.loaders import load_cards
    from citewall.retrieval.embedder import default_embedding_model_path, load_embedder
    from citewall.retrieval.factory import rerank_settings
    from citewall.retrieval.reranker import load_reranker

    for key, value in hf_offline_env().items():
        os.environ.setdefault(key, value)
    settings = load_settings()
    if args.torch_threads:
        settings = settings.model_copy(update={"torch_threads": args.torch_threads})
    machine_before = _machine()
    model_path = default_embedding_model_path()
    # The packaged MiniLM as a cross-encoder (untrained head: the real architecture and cost),
    # at the default runtime and precision, and as it ran before: torch, fp32.
    settings = settings.model_copy(update={"reranker_model": model_path, "reranker_enabled": True})
    before = settings.model_copy(update={"model_runtime": "torch", "reranker_precision": "fp32"})
    embedder, embedder_before = load_embedder(settings), load_embedder(before)
    reranker, status = load_reranker(rerank_settings(settings))
    reranker_before, status_before = load_reranker(rerank_settings(before))
    if reranker is None or reranker_before is None:
        raise SystemExit(f"cross-encoder not loaded: {status} / {status_before}")
    models = load_models(model_path, max_length=settings.reranker_max_length)
    labelled = [
        json.loads(x) for x in args.split.read_text(encoding="utf-8").splitlines() if x.strip()
    ]
    texts = [q["question"] for q in labelled][: args.queries]
    t_start = time.perf_counter()

    result: dict[str, Any] = {
        "series": [
            CW_RRF,
            CW_RRF_BEFORE,
            LC_DENSE,
            LC_ENS,
            CW_FULL,
            CW_FULL_BEFORE,
            LC_RR,
            FLOOR_EMBED_CW,
            FLOOR_EMBED,
            FLOOR_SCAN,
        ],
        "models": {"default": status, "before": status_before},
    }
    print("quality + demo ingest ...", flush=True)
    result["quality"] = quality_and_demo_ingest(
        settings,
        embedder,
        reranker,
        models,
        args.demo,
        labelled[: args.quality_limit or None],
        args.ingest_rounds,
    )
    result["ingest"] = [{"label": "demo KB", **result["quality"].pop("demo_ingest")}]

    demo = load_cards([args.demo]).cards
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    # synthetic_cards is seeded and draws card by card, so the first chunks are the same at
    # every size: embed the real pool once.
    pool_n = min(args.real_pool, max(sizes))
    pool = embedder.embed_documents(
        [index_text(r) for r in chunk_records(synthetic_cards(demo, pool_n))]
    )
    result["sizes"] = []
    for size in sizes:
        print(f"latency at {size:,} chunks ...", flush=True)
        result["sizes"].append(
            latency_at(
                size,
                fusion=bench_fusion(settings),
                demo=demo,
                queries=texts,
                rerank_queries=texts[: args.rerank_queries],
                embedder=embedder,
                reranker=reranker,
                models=models,
                pool=pool,
                embedder_before=embedder_before,
                reranker_before=reranker_before,
            )
        )
    if args.ingest_cards:
        print(f"ingest of {args.ingest_cards:,} synthetic cards ...", flush=True)
        with tempfile.TemporaryDirectory(prefix="citewall-compare-i-") as tmp:
            cards = synthetic_cards(demo, args.ingest_cards, seed=11)
            row, _, _ = _ingest_trio(
                cards, settings, embedder, models, Path(tmp), args.ingest_rounds
            )
        result["ingest"].append({"label": "synthetic", **row})
    result["goals"] = goals(result)
    result["machine"] = f"before: {machine_before}; after: {_machine()}"
    result["config"] = {
        "queries": len(texts),
        "rerank_queries": min(args.rerank_queries, len(texts)),
        "torch_threads": settings.torch_threads,
        "model_runtime": settings.model_runtime,
        "reranker_precision": settings.reranker_precision,
        "rerank_top_n": settings.rerank_top_n,
        "reranker_max_length": settings.reranker_max_length,
        "rrf_k": settings.rrf_k,
        "dense_top_k": settings.dense_top_k,
        "bm25_top_k": settings.bm25_top_k,
        "run_s": round(time.perf_counter() - t_start, 1),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "compare.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    md = to_markdown(result)
    (args.out / "compare.md").write_text(md, encoding="utf-8")
    chart(result, args.out / "latency_vs_size.png")
    print(md)
    return result


if __name__ == "__main__":
    main()
