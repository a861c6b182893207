"""torch against onnx for both models: latency, throughput and whether they still agree.

Everything runs in one process, interleaved (the starting variant rotates from question to
question), so load from other work lands on every variant alike; figures are medians. The
embedder is compared on the labelled test questions (one query embedding each per runtime),
the demo KB's chunks (throughput at batch 16; cosine between runtimes) and the fused (rrf)
nDCG@10 of a demo KB ingested with each runtime, scored by ``citewall_evals.retrieval``. The
cross-encoder (the packaged MiniLM with its seeded untrained head) reranks each test question's
fused top 20 from ``HybridRetriever``'s own stages, at every precision; rank agreement with
torch fp32 (Spearman per question) says whether a cheaper precision orders passages alike.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from citewall.config import Settings, load_settings
from citewall.ingest.chunking import chunk_card
from citewall.ingest.loaders import load_cards
from citewall.ingest.pipeline import ingest_paths
from citewall.kb.audiences import EVERY_CARD
from citewall.retrieval.embedder import SentenceTransformerEmbedder, load_embedder
from citewall.retrieval.factory import build_retriever, rerank_settings
from citewall.retrieval.onnx_models import OnnxCrossEncoder, OnnxEmbedder
from citewall.retrieval.protocols import Embedder, Reranker
from citewall.retrieval.records import index_text
from citewall.retrieval.reranker import CrossEncoderReranker, build_cross_encoder, load_reranker
from citewall.retrieval.retriever import HybridRetriever
from citewall_evals.bench.stats import p50_p95, percentile
from citewall_evals.questions import Question
from citewall_evals.retrieval.paths import evaluate_paths

RUNTIMES = ("torch", "onnx")
PRECISIONS = ("torch fp32", "torch bf16", "onnx fp32", "onnx int8")
BATCH_SIZES = (4, 8, 16, 32)
INT8_OPTIONS = ((False, False), (True, False), (False, True), (True, True))
#: The reference every other precision's scores are compared with.
REFERENCE = "torch fp32"
#: A cheaper precision becomes the default only if it orders passages like the reference.
MIN_SPEARMAN = 0.98
#: The onnx embedder must not move fused retrieval quality by more than this.
MAX_NDCG_DELTA = 0.005
DOC_BATCH = 16


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation (ties get their average rank); NaN when one side is flat.

    >>> spearman([1.0, 2.0, 3.0], [10.0, 30.0, 20.0])
    0.5
    """
    return pearson(_ranks(a), _ranks(b))


def pearson(
    a: Sequence[float] | npt.NDArray[np.float64], b: Sequence[float] | npt.NDArray[np.float64]
) -> float:
    """Pearson's correlation; NaN when one side is flat."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.std() == 0 or y.std() == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def _ranks(values: Sequence[float]) -> npt.NDArray[np.float64]:
    x = np.asarray(values, dtype=np.float64)
    ranks = np.empty(len(x))
    ranks[np.argsort(x, kind="stable")] = np.arange(len(x))
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    return np.asarray((np.bincount(inverse, weights=ranks) / counts)[inverse])


def _timed(fn: Callable[..., object], *args: object) -> float:
    """Milliseconds ``fn(*args)`` took."""
    t0 = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - t0) * 1000


def _rotated(names: Sequence[str], i: int) -> list[str]:
    """``names`` starting at the ``i``-th, reversed every other cycle, so no variant always
    follows the same one."""
    k = i % len(names)
    order = list(names[k:]) + list(names[:k])
    return order[::-1] if (i // len(names)) % 2 else order


def _settings(data_dir: Path, runtime: str, **overrides: object) -> Settings:
    return load_settings(
        data_dir=data_dir, database_url=None, chroma_url=None, model_runtime=runtime, **overrides
    )


def _ingested(settings: Settings, demo: Path, embedder: Embedder) -> HybridRetriever:
    ingest_paths([demo], settings, embedder=embedder, progress=False)
    return build_retriever(settings, embedder=embedder, reranker=None)


def embedding(
    embedders: dict[str, SentenceTransformerEmbedder | OnnxEmbedder],
    queries: Sequence[str],
    chunks: Sequence[str],
    rounds: int,
) -> dict[str, Any]:
    """Query latency, document throughput (and the onnx embedder's by batch), cosines."""
    names = list(embedders)
    times: dict[str, list[float]] = {r: [] for r in names}
    for i, q in enumerate(queries):
        for r in _rotated(names, i):
            times[r].append(_timed(embedders[r].embed_query, q))
    docs: dict[str, list[float]] = {r: [] for r in names}
    for i in range(rounds):
        for r in _rotated(names, i):
            docs[r].append(_timed(embedders[r].embed_documents, chunks))
    onnx = embedders["onnx"]
    by_batch: dict[str, float] = {}
    for size in BATCH_SIZES:
        onnx.batch_size = size
        by_batch[str(size)] = _per_s(len(chunks), _timed(onnx.embed_documents, chunks))
    onnx.batch_size = DOC_BATCH
    both = [embedders[r].embed_documents(chunks) for r in RUNTIMES]
    cosines = (both[0] * both[1]).sum(axis=1)
    return {
        "query_ms": {r: p50_p95(v) for r, v in times.items()},
        "queries": len(queries),
        "documents": {
            "chunks": len(chunks),
            "batch": DOC_BATCH,
            "rounds": rounds,
            "chunks_per_s": {r: _per_s(len(chunks), percentile(v, 0.5)) for r, v in docs.items()},
            "onnx_chunks_per_s_by_batch": by_batch,
        },
        "cosine": {"min": round(float(cosines.min()), 8), "mean": round(float(cosines.mean()), 8)},
    }


def _per_s(n: int, ms: float) -> float:
    return round(n / ms * 1000, 1)


def candidates(retriever: HybridRetriever, question: str, n: int = 20) -> list[str]:
    """The indexed texts of ``question``'s fused top ``n``, from the retriever's own stages."""
    dense = retriever.dense(retriever.embed(question), cards=EVERY_CARD)
    bm25, _ = retriever.lexical_hits(question, cards=EVERY_CARD)
    top = [cid for cid, _ in retriever.fuse(dense, bm25)][:n]
    records = retriever.read(top)
    return [index_text(records[cid]) for cid in top if cid in records]


def rerank(
    rerankers: dict[str, Reranker], work: Sequence[tuple[str, list[str]]]
) -> dict[str, dict[str, Any]]:
    """p50/p95 (ms) per reranker over ``work`` (question, passages), interleaved; with
    ``REFERENCE`` among them, each one's Spearman per question (mean, min) and pooled logit
    Pearson against it."""
    names = list(rerankers)
    times: dict[str, list[float]] = {r: [] for r in names}
    scores: dict[str, list[list[float]]] = {r: [] for r in names}
    for i, (q, passages) in enumerate(work):
        for r in _rotated(names, i):
            t0 = time.perf_counter()
            scores[r].append(rerankers[r].score(q, passages))
            times[r].append((time.perf_counter() - t0) * 1000)
    ref = scores.get(REFERENCE)
    out: dict[str, dict[str, Any]] = {}
    for r in names:
        row: dict[str, Any] = {"ms": p50_p95(times[r], 1)}
        if ref is not None:
            rho = [spearman(a, b) for a, b in zip(scores[r], ref, strict=True)]
            valid = [x for x in rho if not np.isnan(x)]
            row["spearman_mean"] = round(float(np.mean(valid)), 4)
            row["spearman_min"] = round(float(np.min(valid)), 4)
            pooled = [x for s in scores[r] for x in s]
            row["pearson"] = round(pearson(pooled, [x for s in ref for x in s]), 5)
        out[r] = row
    return out


def recommend(result: dict[str, Any]) -> dict[str, str]:
    """The defaults this run supports: onnx if its query embedding is faster at equal quality
    (cosine >= 0.999, fused nDCG@10 within ``MAX_NDCG_DELTA``); the fastest precision of that
    runtime whose mean Spearman with torch fp32 is >= ``MIN_SPEARMAN``."""
    emb = result["embedding"]
    onnx_ok = (
        emb["cosine"]["min"] >= 0.999
        and abs(result["fused_ndcg@10"]["delta"]) <= MAX_NDCG_DELTA
        and emb["query_ms"]["onnx"]["p50"] < emb["query_ms"]["torch"]["p50"]
    )
    runtime = "onnx" if onnx_ok else "torch"
    rows = result["rerank"]["precisions"]
    eligible = [
        name
        for name, row in rows.items()
        if name.startswith(runtime) and (name == REFERENCE or row["spearman_mean"] >= MIN_SPEARMAN)
    ]
    fastest = min(eligible, key=lambda name: rows[name]["ms"]["p50"])
    return {"model_runtime": runtime, "reranker_precision": fastest.split()[1]}


def run(
    *,
    demo: Path,
    questions: Sequence[Question],
    model_dir: str,
    work_dir: Path,
    threads: int | None,
    rerank_questions: int,
    sweep_questions: int,
    rounds: int = 2,
) -> dict[str, Any]:
    """Every figure of the report (see the module docstring); ``work_dir`` is scratch."""
    load_before = os.getloadavg()
    t_start = time.perf_counter()
    base: dict[str, object] = {"torch_threads": threads, "reranker_model": model_dir}
    settings = {r: _settings(work_dir / r, r, **base) for r in RUNTIMES}
    embedders = {r: load_embedder(settings[r]) for r in RUNTIMES}
    if embedders["onnx"].runtime != "onnx":
        raise RuntimeError("the onnx embedder fell back to torch (see the warning above)")
    chunks = [
        index_text(r)
        for card in load_cards([demo]).cards
        for r in chunk_card(card, settings["torch"].chunk_max_words)
    ]
    result: dict[str, Any] = {
        "torch_threads": threads,
        "cpus": os.cpu_count(),
        "max_length": settings["torch"].reranker_max_length,
    }
    result["embedding"] = embedding(embedders, [q.question for q in questions], chunks, rounds)

    retrievers = {r: _ingested(settings[r], demo, embedders[r]) for r in RUNTIMES}
    ndcg = {
        r: evaluate_paths(retrievers[r], questions, served=False)["rrf"].ndcg_at_10
        for r in RUNTIMES
    }
    result["fused_ndcg@10"] = {
        **{r: round(v, 4) for r, v in ndcg.items()},
        "delta": round(ndcg["onnx"] - ndcg["torch"], 4),
    }

    torch_model = build_cross_encoder(
        model_dir, max_length=settings["torch"].reranker_max_length, local_only=True
    )
    onnx_rr, status = load_reranker(rerank_settings(settings["onnx"]))
    if not isinstance(onnx_rr, OnnxCrossEncoder):
        raise RuntimeError(f"the onnx cross-encoder is unavailable: {status}")
    rerankers: dict[str, Reranker] = {
        "torch fp32": CrossEncoderReranker(torch_model, name="torch fp32"),
        "torch bf16": CrossEncoderReranker(torch_model, name="torch bf16", precision="bf16"),
        "onnx fp32": onnx_rr,
        "onnx int8": OnnxCrossEncoder(onnx_rr.model.quantized(), name="onnx int8"),
    }
    work = [(q.question, candidates(retrievers["torch"], q.question)) for q in questions]
    result["rerank"] = {
        "pairs": max(len(p) for _, p in work),
        "questions": len(work[:rerank_questions]),
        "precisions": rerank(rerankers, work[:rerank_questions]),
    }

    sweep = work[:sweep_questions]
    result["rerank_batch_p50_ms"] = {"questions": len(sweep)}
    for name in ("torch fp32", "onnx fp32"):
        variants: dict[str, Reranker] = {
            str(size): (
                CrossEncoderReranker(torch_model, name=name, batch_size=size, warm_up=False)
                if name.startswith("torch")
                else OnnxCrossEncoder(onnx_rr.model, name=name, batch_size=size, warm_up=False)
            )
            for size in BATCH_SIZES
        }
        rows = rerank(variants, sweep)
        result["rerank_batch_p50_ms"][name] = {k: row["ms"]["p50"] for k, row in rows.items()}

    options: dict[str, Reranker] = {REFERENCE: rerankers[REFERENCE]}
    for per_channel, reduce_range in INT8_OPTIONS:
        model = onnx_rr.model.quantized(per_channel=per_channel, reduce_range=reduce_range)
        key = f"per_channel={per_channel} reduce_range={reduce_range}"
        options[key] = OnnxCrossEncoder(model, name=key, precision="int8")
    result["int8_options"] = {"questions": len(sweep), **rerank(options, sweep)}

    result["recommended"] = recommend(result)
    result["load_average"] = {"before": load_before[:2], "after": os.getloadavg()[:2]}
    result["seconds"] = round(time.perf_counter() - t_start, 1)
    return result


def markdown(result: dict[str, Any]) -> str:
    """The report's tables."""
    emb, docs = result["embedding"], result["embedding"]["documents"]
    lines = [
        f"# torch vs onnx ({result['cpus']} cpus, {result['torch_threads']} thread(s) per "
        f"call, load {result['load_average']['before']} -> {result['load_average']['after']}, "
        f"{result['seconds']} s)",
        "",
        "## Embedder",
        "",
        f"| runtime | query p50 / p95 ms ({emb['queries']} test questions) | "
        f"documents/s ({docs['chunks']} demo chunks, batch {docs['batch']}) | fused nDCG@10 |",
        "|---|---|---|---|",
    ]
    for r in RUNTIMES:
        q = emb["query_ms"][r]
        lines.append(
            f"| {r} | {q['p50']} / {q['p95']} | {docs['chunks_per_s'][r]} | "
            f"{result['fused_ndcg@10'][r]} |"
        )
    by_batch = ", ".join(f"{k}: {v}" for k, v in docs["onnx_chunks_per_s_by_batch"].items())
    lines += [
        "",
        f"cosine onnx vs torch over the demo chunks: min {emb['cosine']['min']}, mean "
        f"{emb['cosine']['mean']}; nDCG@10 delta {result['fused_ndcg@10']['delta']}; onnx "
        f"documents/s by batch: {by_batch}",
        "",
        f"## Cross-encoder: fused top {result['rerank']['pairs']} at max_length "
        f"{result['max_length']}, {result['rerank']['questions']} test questions",
        "",
        "| precision | p50 ms | p95 ms | Spearman vs torch fp32 (mean / min) | logit Pearson |",
        "|---|---|---|---|---|",
    ]
    for name, row in result["rerank"]["precisions"].items():
        lines.append(_rerank_row(name, row))
    sweep = result["rerank_batch_p50_ms"]
    lines += [
        "",
        f"Batch size sweep, rerank p50 ms ({sweep['questions']} questions):",
        "",
        "| runtime | " + " | ".join(f"batch {b}" for b in BATCH_SIZES) + " |",
        "|---|" + "---|" * len(BATCH_SIZES),
    ]
    for name in ("torch fp32", "onnx fp32"):
        lines.append(
            f"| {name} | " + " | ".join(str(sweep[name][str(b)]) for b in BATCH_SIZES) + " |"
        )
    options = result["int8_options"]
    lines += [
        "",
        f"int8 quantisation options ({options['questions']} questions):",
        "",
        "| options | p50 ms | p95 ms | Spearman (mean / min) | logit Pearson |",
        "|---|---|---|---|---|",
    ]
    lines += [_rerank_row(k, row) for k, row in options.items() if k != "questions"]
    rec = result["recommended"]
    lines += [
        "",
        f"Supported defaults: CITEWALL_MODEL_RUNTIME={rec['model_runtime']}, "
        f"CITEWALL_RERANKER_PRECISION={rec['reranker_precision']} (a cheaper precision needs "
        f"mean Spearman >= {MIN_SPEARMAN}; onnx needs cosine >= 0.999 and nDCG@10 within "
        f"{MAX_NDCG_DELTA}).",
    ]
    return "\n".join(lines) + "\n"


def _rerank_row(name: str, row: dict[str, Any]) -> str:
    return (
        f"| {name} | {row['ms']['p50']} | {row['ms']['p95']} | {row['spearman_mean']} / "
        f"{row['spearman_min']} | {row['pearson']} |"
    )
