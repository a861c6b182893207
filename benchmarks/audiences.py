"""Filtered retrieval against unfiltered, side by side in one run: rrf_only at 10k chunks with
5 audiences (docs/audiences.md).

python benchmarks/audiences.py [--chunks 10000] [--rounds 3] [--json]

Half the synthetic cards are open to every member; the other half are spread over 5 audiences
(10% of the corpus each). Each question is retrieved, in turn, unfiltered (staff), as a member
of one group (60% of the corpus visible), as a member of two groups (70%) and as a member in no
group (50%), through ``HybridRetriever.retrieve`` itself (Chroma's ``where`` pre-filter, the
BM25 weight mask). Vectors: 1,000 embedded for real, the rest those plus Gaussian noise, as in
``citewall bench retrieval``; query embedding is real.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "evals"))

from citewall.config import load_settings  # noqa: E402
from citewall.ingest.loaders import load_cards  # noqa: E402
from citewall.kb.audiences import EVERY_CARD, Viewer, retrievable_for  # noqa: E402
from citewall.retrieval.embedder import load_embedder  # noqa: E402
from citewall.retrieval.lexical_index import load_bm25, save_bm25  # noqa: E402
from citewall.retrieval.protocols import LexicalIndex  # noqa: E402
from citewall.retrieval.records import index_text  # noqa: E402
from citewall.retrieval.reloading import ReloadingArtifact  # noqa: E402
from citewall.retrieval.retriever import HybridRetriever  # noqa: E402
from citewall.retrieval.vector_index import ChromaVectorIndex  # noqa: E402
from citewall_evals.bench.corpus import chunk_records, synthetic_cards  # noqa: E402
from citewall_evals.bench.stats import p50_p95  # noqa: E402
from citewall_evals.questions import load_questions  # noqa: E402

AUDIENCES = tuple(f"aud{i}" for i in range(5))
READERS = {
    "unfiltered (staff)": EVERY_CARD,
    "member of 1 group": retrievable_for(Viewer.member(AUDIENCES[:1])),
    "member of 2 groups": retrievable_for(Viewer.member(AUDIENCES[:2])),
    "member of no group": retrievable_for(Viewer.member(())),
}


def run(chunks: int, rounds: int, real_pool: int = 1000) -> dict[str, Any]:
    settings = load_settings(reranker_enabled=False)
    embedder = load_embedder(settings)
    demo = load_cards([REPO / "kb" / "demo" / "cards.jsonl"]).cards
    cards = [
        c if i % 2 == 0 else c.model_copy(update={"audiences": (AUDIENCES[(i // 2) % 5],)})
        for i, c in enumerate(synthetic_cards(demo, chunks))
    ]
    records = chunk_records(cards)
    texts = [index_text(r) for r in records]
    pool = embedder.embed_documents(texts[: min(real_pool, len(texts))])
    rng = np.random.default_rng(7)
    vecs = pool[np.arange(len(texts)) % len(pool)] + rng.normal(
        0, 0.02, (len(texts), pool.shape[1])
    )
    vecs[: len(pool)] = pool
    vecs = (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)
    questions = [q.question for q in load_questions(REPO / "kb" / "eval" / "questions.test.jsonl")]
    out: dict[str, Any] = {"chunks": len(records), "audiences": len(AUDIENCES), "rounds": rounds}
    with tempfile.TemporaryDirectory(prefix="citewall-bench-audiences-") as tmp:
        index = ChromaVectorIndex.persistent(Path(tmp) / "chroma", "bench")
        index.upsert(records, vecs)
        save_bm25(
            Path(tmp) / "bm25",
            [r.chunk_id for r in records],
            texts,
            {r.chunk_id: r.audiences for r in records if r.audiences},
        )
        lexical: ReloadingArtifact[LexicalIndex] = ReloadingArtifact(
            partial(load_bm25, Path(tmp) / "bm25")
        )
        retriever = HybridRetriever(
            settings, embedder=embedder, vector_index=index, lexical=lexical, reranker=None
        )
        totals: dict[str, list[float]] = {name: [] for name in READERS}
        dense: dict[str, list[float]] = {name: [] for name in READERS}
        # For the member in no group: is the card staff would get first hidden from them?
        hidden_top: dict[bool, list[float]] = {True: [], False: []}
        visible_ok = True
        for cards_filter in READERS.values():  # warm every filter's caches once
            retriever.retrieve(questions[0], cards=cards_filter)
        t0 = time.perf_counter()
        for _ in range(rounds):
            for q in questions:
                for name, cards_filter in READERS.items():  # alternated: same load for each
                    ctx = retriever.retrieve(q, cards=cards_filter)
                    assert ctx.hybrid_path == "rrf_only", ctx.notes
                    totals[name].append(ctx.timings_ms["total"])
                    dense[name].append(ctx.timings_ms["dense"])
                    if name == "unfiltered (staff)":
                        top = ctx.chunks[0].id if ctx.chunks else None
                        top_hidden = top is not None and bool(
                            cards[int(top.split("-")[1])].audiences
                        )
                    if name == "member of no group":
                        hidden_top[top_hidden].append(ctx.timings_ms["total"])
                    returned = [c.id for c in ctx.chunks]
                    if name != "unfiltered (staff)":
                        visible_ok &= all(
                            cards_filter.allows(cards[int(cid.split("-")[1])].audiences)
                            for cid in returned
                        )
        out["wall_s"] = round(time.perf_counter() - t0, 1)
        out["queries_per_reader"] = len(questions) * rounds
        out["only_allowed_cards_returned"] = visible_ok
        out["total_ms"] = {name: p50_p95(v) for name, v in totals.items()}
        out["dense_ms"] = {name: p50_p95(v) for name, v in dense.items()}
        out["no_group_member_total_ms"] = {
            "staff's top card hidden": p50_p95(hidden_top[True]),
            "staff's top card visible": p50_p95(hidden_top[False]),
        }
        base = out["total_ms"]["unfiltered (staff)"]["p50"]
        out["p50_ratio_to_unfiltered"] = {
            name: round(v["p50"] / base, 3) for name, v in out["total_ms"].items()
        }
    return out


def to_markdown(result: dict[str, Any]) -> str:
    lines = [
        f"{result['chunks']} chunks, {result['audiences']} audiences, rrf_only, "
        f"{result['queries_per_reader']} queries per reader",
        "",
        "| reader | total p50 ms | total p95 ms | p50 / unfiltered | dense p50 ms |",
        "|---|---|---|---|---|",
    ]
    for name, v in result["total_ms"].items():
        ratio = result["p50_ratio_to_unfiltered"][name]
        d = result["dense_ms"][name]["p50"]
        lines.append(f"| {name} | {v['p50']} | {v['p95']} | {ratio} | {d} |")
    lines += ["", "| member of no group, by the card staff would get first | p50 ms | p95 ms |"]
    lines.append("|---|---|---|")
    for name, v in result["no_group_member_total_ms"].items():
        lines.append(f"| {name} | {v['p50']} | {v['p95']} |")
    lines.append(f"\nonly allowed cards returned: {result['only_allowed_cards_returned']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.chunks, args.rounds)
    print(json.dumps(result, indent=2) if args.json else to_markdown(result))


if __name__ == "__main__":
    main()
