"""Candidate abstention signals, measured on a labelled KB's split (tune on dev only).

For each labelled question (answerable with a gold card, or unanswerable: near miss or
uncovered) the production retriever's context gives:

- ``dense``: the best cosine similarity to a chunk (the signal in use);
- ``sentence_top1`` / ``sentence_top3``: the best cosine similarity to one sentence unit of
  the best card / of the top three cards, from the sentence vectors stored at ingest (no model
  call per unit);
- ``control`` (negative control): a hash of the question's text, which must score near an AUC
  of 0.5 and recall little;
- lexical flags, each "the question has a term that ...": ``absent_from_kb`` (no card uses
  it), ``named_absent_from_kb`` (the same, for a capitalised word after the first or a
  number), ``key_absent_from_context`` (a key term, ``answerability.key_terms``, that none of
  the top three cards holds), ``rare_absent_from_context`` (a term in at most 1 % of the
  cards, or 2, that none of the top three cards holds).

Reported: each score's AUC (answerable vs unanswerable); how many questions of each kind each
flag fires on; and the best ``not_found`` recall at an answered rate of at least 0.95 for a
threshold on each score, and for the dense threshold with each flag refusing too (the pair of
thresholds "refuse below t1, or below t2 when the flag fires" chosen on the split itself:
an upper bound, since it is tuned on what it is scored on). From the repository root:

    HF_HUB_OFFLINE=1 python benchmarks/abstention_signals.py --kb demo --split dev
"""

from __future__ import annotations

import argparse
import json
import tempfile
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from abstention import SETS, _ingest, _rows

from citewall.citations.units import card_units
from citewall.kb.audiences import EVERY_CARD
from citewall.retrieval.answerability import PHRASING, key_terms
from citewall.retrieval.calibration import auc
from citewall.retrieval.embedder import load_embedder
from citewall.retrieval.factory import build_decider, build_retriever, open_vector_index
from citewall.retrieval.sentence_store import load_sentence_vectors
from citewall.text.terms import STOPWORDS, WORD, content_terms, stem
from citewall_evals.workspace import workspace_settings

TARGET = 0.95
SCORES = ("dense", "sentence_top1", "sentence_top3", "control")
FLAGS = (
    "absent_from_kb",
    "named_absent_from_kb",
    "key_absent_from_context",
    "rare_absent_from_context",
)


def _terms(question: str) -> tuple[set[str], set[str]]:
    """The question's content stems, and those of its names and numbers."""
    terms, named = set(), set()
    for i, token in enumerate(WORD.findall(question)):
        word = token.lower()
        if word in STOPWORDS or stem(word) in PHRASING:
            continue
        terms.add(stem(word))
        if (i > 0 and token[0].isupper()) or any(c.isdigit() for c in token):
            named.add(stem(word))
    return terms, named


def _best_threshold(
    a: Sequence[float], u: Sequence[float], refuse_a: Sequence[bool], refuse_u: Sequence[bool]
) -> dict[str, float] | None:
    """Best recall at answered >= TARGET: refuse below t1, or below t2 when flagged."""
    values = sorted({-1.0, *a, *u})
    best: dict[str, float] | None = None
    for i, t1 in enumerate(values):
        for t2 in values[i:] if any(refuse_a) or any(refuse_u) else [t1]:
            answered = sum(
                not (x < t1 or (f and x < t2)) for x, f in zip(a, refuse_a, strict=True)
            ) / len(a)
            if answered < TARGET:
                continue
            recall = sum(x < t1 or (f and x < t2) for x, f in zip(u, refuse_u, strict=True))
            recall /= len(u)
            if best is None or recall > best["not_found_recall"]:
                best = {
                    "not_found_recall": round(recall, 3),
                    "answered_rate": round(answered, 3),
                    "t1": round(t1, 4),
                    "t2": round(t2, 4),
                }
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", choices=sorted(SETS), default="demo")
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    args = parser.parse_args()
    cards, questions_dir = SETS[args.kb]
    with tempfile.TemporaryDirectory(prefix="cw-signals-") as tmp:
        settings = workspace_settings(Path(tmp))
        embedder = load_embedder(settings)
        _ingest(list(cards), settings, embedder)
        retriever = build_retriever(settings, embedder=embedder, reranker=None)
        decider = build_decider(settings)
        assert decider is not None
        vocabulary = decider.in_use().vocabulary
        store = load_sentence_vectors(settings.sentences_dir)
        records, _ = open_vector_index(settings).all_chunks()
        by_card: dict[str, list[str]] = {}
        for r in records:
            by_card.setdefault(r.parent_id, []).append(f"{r.metadata.get('title') or ''} {r.text}")
        df: Counter[str] = Counter()
        for texts in by_card.values():
            df.update(content_terms(" ".join(texts)))
        rare_floor = max(2, 0.01 * len(by_card))

        def signals(question: str) -> dict[str, Any]:
            context = retriever.retrieve(question, cards=EVERY_CARD)
            qvec = embedder.embed_query(question)
            best_units: list[float] = []
            for chunk in context.chunks[:3]:
                vectors, found = store.lookup(card_units(chunk.all_text))
                best_units.append(float((vectors[found] @ qvec).max()) if found.any() else 0.0)
            seen: set[str] = set()
            for chunk in context.chunks[:3]:
                seen |= content_terms(f"{chunk.title} {chunk.all_text}")
            terms, named = _terms(question)
            return {
                "dense": float(context.top_dense or 0.0),
                "sentence_top1": best_units[0] if best_units else 0.0,
                "sentence_top3": max(best_units, default=0.0),
                # Negative control: a score that knows nothing of the question's meaning.
                "control": zlib.crc32(question.encode()) / 2**32,
                "absent_from_kb": any(df.get(t, 0) == 0 for t in terms),
                "named_absent_from_kb": any(df.get(t, 0) == 0 for t in named),
                "key_absent_from_context": bool(key_terms(question, vocabulary) - seen),
                "rare_absent_from_context": any(
                    df.get(t, 0) <= rare_floor and t not in seen for t in terms
                ),
            }

        answerable = [
            signals(q["question"])
            for q in _rows(questions_dir / f"questions.{args.split}.jsonl")
            if q.get("gold")
        ]
        unanswerable = [
            {"kind": u["kind"], **signals(u["question"])}
            for u in _rows(questions_dir / f"unanswerable.{args.split}.jsonl")
        ]

    def column(rows: list[dict[str, Any]], name: str) -> list[Any]:
        return [r[name] for r in rows]

    no_flag_a: list[bool] = [False] * len(answerable)
    no_flag_u: list[bool] = [False] * len(unanswerable)
    out: dict[str, Any] = {
        "kb": args.kb,
        "split": args.split,
        "questions": {"answerable": len(answerable), "unanswerable": len(unanswerable)},
        "auc": {s: round(auc(column(answerable, s), column(unanswerable, s)), 3) for s in SCORES},
        "threshold_alone": {
            s: _best_threshold(column(answerable, s), column(unanswerable, s), no_flag_a, no_flag_u)
            for s in SCORES
        },
        "flags": {},
    }
    near: Callable[[dict[str, Any]], bool] = lambda r: r["kind"] == "near_miss"  # noqa: E731
    for flag in FLAGS:
        out["flags"][flag] = {
            "answerable_flagged": sum(column(answerable, flag)),
            "unanswerable_flagged": sum(column(unanswerable, flag)),
            "near_misses_flagged": sum(r[flag] for r in unanswerable if near(r)),
            "refusing_alone_answered_rate": round(
                1 - sum(column(answerable, flag)) / len(answerable), 3
            ),
            "with_dense": _best_threshold(
                column(answerable, "dense"),
                column(unanswerable, "dense"),
                column(answerable, flag),
                column(unanswerable, flag),
            ),
        }
    out["near_misses"] = sum(near(r) for r in unanswerable)
    out["mean"] = {
        s: [round(float(np.mean(column(rows, s))), 3) for rows in (answerable, unanswerable)]
        for s in SCORES
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
