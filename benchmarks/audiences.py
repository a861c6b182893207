"""Filtered retrieval against unfiltered, side by side in one run: rrf_only at 10k chunks with
5 audiences (docs/audiences.md); with ``--quality``, the answers of a member who may see every
card of a KB whose cards carry audiences, against the same KB without audiences.

python benchmarks/audiences.py [--chunks 10000] [--rounds 3] [--json]
python benchmarks/audiences.py --quality [--split test] [--json]

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
from fastapi.testclient import TestClient

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "evals"))

from citewall.config import load_settings  # noqa: E402
from citewall.ingest.loaders import load_cards  # noqa: E402
from citewall.kb.audiences import EVERY_CARD, Viewer, retrievable_for  # noqa: E402
from citewall.kb.card import Card  # noqa: E402
from citewall.retrieval.embedder import load_embedder  # noqa: E402
from citewall.retrieval.factory import fusion_settings  # noqa: E402
from citewall.retrieval.lexical_index import load_bm25, save_bm25  # noqa: E402
from citewall.retrieval.protocols import LexicalIndex  # noqa: E402
from citewall.retrieval.records import index_text  # noqa: E402
from citewall.retrieval.reloading import ReloadingArtifact  # noqa: E402
from citewall.retrieval.retriever import HybridRetriever  # noqa: E402
from citewall.retrieval.vector_index import ChromaVectorIndex  # noqa: E402
from citewall.storage.users import (  # noqa: E402
    authenticate,
    set_groups,
    viewer_of,
)
from citewall_evals.bench.corpus import chunk_records, synthetic_cards  # noqa: E402
from citewall_evals.bench.stats import p50_p95  # noqa: E402
from citewall_evals.data import DEMO_CARDS, HOSTILE_CARDS  # noqa: E402
from citewall_evals.harness import answer_quality, judge_calibrated_on_demo  # noqa: E402
from citewall_evals.quality.replay import replay_questions  # noqa: E402
from citewall_evals.questions import labelled_split, load_questions  # noqa: E402
from citewall_evals.retrieval.metrics import score_rankings  # noqa: E402
from citewall_evals.retrieval.paths import served_rankings  # noqa: E402
from citewall_evals.workspace import EvalWorkspace, build_workspace  # noqa: E402

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
            fusion_settings(settings),
            embedder=embedder,
            vector_index=index,
            lexical=lexical,
            reranker=None,
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


QUALITY_KEYS = ("nugget_recall", "off_topic_rate", "ndcg@10", "recall@10")
#: The member of the restricted KB in no audience: half the cards hidden from them.
CONTROL = "negative control: member in no audience"


def restricted_copy(source: Path, dest: Path) -> Path:
    """``source``'s cards with every other one restricted to one of ``AUDIENCES``."""
    cards = load_cards([source]).cards
    with dest.open("w", encoding="utf-8") as out:
        for i, card in enumerate(cards):
            if i % 2 == 1:
                card = card.model_copy(update={"audiences": (AUDIENCES[(i // 2) % 5],)})
            out.write(json.dumps(_card_row(card), ensure_ascii=False) + "\n")
    return dest


def _card_row(card: Card) -> dict[str, Any]:
    return card.model_dump(mode="json", exclude_defaults=True)


def _measure(ws: EvalWorkspace, split: str) -> dict[str, Any]:
    """The split's answers as the workspace's member (through the chat route), scored by the
    harness; and ``retrieve``'s ranking for that member."""
    questions = labelled_split(split)
    judge, _ = judge_calibrated_on_demo(ws.embedder, ws.catalogue.cards)
    with TestClient(ws.app_for("extractive"), raise_server_exceptions=False) as client:
        replay = replay_questions(client, questions, judge, ws.tokens, "extractive")
    quality = answer_quality(ws, {"extractive": replay}, questions, split, judge)
    extractive = quality["generators"]["extractive"]
    with ws.runtime.session_factory() as session:
        member = authenticate(session, ws.tokens.member)
        assert member is not None
        cards_filter = retrievable_for(viewer_of(member))
    rankings, paths = served_rankings(ws.runtime.retriever, questions, cards_filter)
    ndcg = score_rankings("served", rankings, [q.gold for q in questions], paths)
    return {
        "questions": len(questions),
        "answers": extractive["answers"],
        "failures": len(replay.failures),
        "nugget_recall": extractive["nugget_recall"],
        "off_topic_rate": extractive["off_topic_rate"],
        "ndcg@10": round(ndcg.ndcg_at_10, 4),
        "recall@10": round(ndcg.recall_at_10, 4),
        "hybrid_paths": paths,
        "answers_text": [a.answer for a in replay.answers],
    }


def run_quality(split: str) -> dict[str, Any]:
    """Answer quality with audiences where the member sees every card, beside the same KB
    without audiences."""
    settings = load_settings(reranker_enabled=False)
    embedder = load_embedder(settings)
    out: dict[str, Any] = {"split": split, "audiences": len(AUDIENCES)}
    with tempfile.TemporaryDirectory(prefix="citewall-bench-audience-quality-") as tmp:
        root = Path(tmp)
        plain = build_workspace(root / "plain", embedder=embedder)
        try:
            out["without audiences"] = _measure(plain, split)
        finally:
            plain.close()
        (root / "kb").mkdir()
        restricted_paths = (
            restricted_copy(DEMO_CARDS, root / "kb" / "demo.jsonl"),
            restricted_copy(HOSTILE_CARDS, root / "kb" / "hostile.jsonl"),
        )
        restricted = build_workspace(
            root / "restricted", kb_paths=restricted_paths, embedder=embedder
        )
        try:
            with restricted.runtime.session_factory() as session:
                set_groups(session, "eval-member", AUDIENCES)
            out["every card visible, half restricted"] = _measure(restricted, split)
            # The negative control: the same KB for a member in no audience, who sees half the
            # cards. The comparison must show it (a change well past the target), or it could
            # not show a filter that hides what it should not.
            with restricted.runtime.session_factory() as session:
                set_groups(session, "eval-member", ())
            out[CONTROL] = _measure(restricted, split)
        finally:
            restricted.close()
    a, b, c = out["without audiences"], out["every card visible, half restricted"], out[CONTROL]
    plain_answers = a.pop("answers_text")
    out["same_answers"] = sum(
        x == y for x, y in zip(plain_answers, b.pop("answers_text"), strict=True)
    )
    out["control_same_answers"] = sum(
        x == y for x, y in zip(plain_answers, c.pop("answers_text"), strict=True)
    )
    out["change"] = {key: round(b[key] - a[key], 4) for key in QUALITY_KEYS}
    out["control_change"] = {key: round(c[key] - a[key], 4) for key in QUALITY_KEYS}
    return out


def quality_markdown(result: dict[str, Any]) -> str:
    keys = QUALITY_KEYS
    lines = [
        f"{result['split']} split, extractive generator, {result['audiences']} audiences; "
        "the member is in every audience",
        "",
        "| KB | answers | " + " | ".join(keys) + " |",
        "|---|---|" + "---|" * len(keys),
    ]
    for name in ("without audiences", "every card visible, half restricted", CONTROL):
        row = result[name]
        figures = " | ".join(str(row[k]) for k in keys)
        lines.append(f"| {name} | {row['answers']}/{row['questions']} | {figures} |")
    change = " | ".join(f"{result['change'][k]:+.4f}" for k in keys)
    lines.append(f"| change, every card visible | | {change} |")
    control = " | ".join(f"{result['control_change'][k]:+.4f}" for k in keys)
    lines.append(f"| change, negative control | | {control} |")
    total = result["without audiences"]["questions"]
    lines.append(f"\nidentical answers: {result['same_answers']} of {total}")
    control_same = result["control_same_answers"]
    lines.append(f"identical answers, negative control: {control_same} of {total}")
    return "\n".join(lines)


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
    parser.add_argument(
        "--quality",
        action="store_true",
        help="answer quality (nugget recall, nDCG@10) with every card visible, not timing",
    )
    parser.add_argument("--split", choices=("test", "dev"), default="test")
    args = parser.parse_args()
    if args.quality:
        quality = run_quality(args.split)
        print(json.dumps(quality, indent=2) if args.json else quality_markdown(quality))
        return
    result = run(args.chunks, args.rounds)
    print(json.dumps(result, indent=2) if args.json else to_markdown(result))


if __name__ == "__main__":
    main()
