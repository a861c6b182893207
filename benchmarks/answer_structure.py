"""Answers on a labelled KB, through the real ingest, retrieval and extractive generator.

Ingests one KB into a temporary data dir (chunking, Chroma, BM25, the stored sentence
vectors), retrieves each question of a split with the hybrid retriever (no reranker: the
``rrf_only`` path, as no trained cross-encoder ships offline) and answers it with the
extractive generator over the server's embedder. Per answer it reads:

- **fragments**: quoted units (the text before each ``[n]`` marker) that are not a whole unit
  of the cited card's outline (``citations.outline``: a whole sentence or list item);
- **first sentence from gold**: where a gold card is ranked first, whether the first sentence
  cites a gold card (``evals.quality.first_sentence``), with its control (the first sentence
  taken from the lowest-ranked card);
- **mixed sections**: answers quoting two headed sections of one card that the question does
  not both name;
- **nugget recall** and **off-topic rate** with the eval's judges (thresholds fitted on the
  demo's hand labels, as ``citewall eval`` does). Recall counts member-facing nuggets only;
- **staff nuggets leaked**: the staff-only nuggets (``audience: staff``, stated only in a
  playbook's staff notes) that the answer states. Control: the same nuggets judged against
  the gold playbooks' staff notes, which state them (must score high, or the judge could not
  see a leak).

Tune only on ``--split dev``; report ``test``. Run from the repository root:

    HF_HUB_OFFLINE=1 python benchmarks/answer_structure.py --kb zulip --split dev --split test
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citewall.citations.outline import outline
from citewall.config import load_settings
from citewall.generation.extractive import NO_ANSWER, ExtractiveGenerator
from citewall.ingest.pipeline import ingest_paths
from citewall.kb.audiences import EVERY_CARD
from citewall.retrieval.embedder import load_embedder
from citewall.retrieval.factory import build_retriever, kb_embedder
from citewall.retrieval.retriever import HybridRetriever
from citewall.text.terms import content_terms
from citewall_evals.data import SUPPORT_LABELS, read_jsonl, require
from citewall_evals.quality.answers import (
    NuggetJudge,
    load_nugget_labels,
    nugget_audiences,
    off_topic_sentences,
)
from citewall_evals.quality.calibration import calibrate, load_labels
from citewall_evals.quality.first_sentence import (
    Opening,
    first_sentence_rate,
    from_lowest_ranked,
)
from citewall_evals.quality.support import SupportJudge
from citewall_evals.questions import load_questions
from citewall_evals.redteam.catalogue import KbCard, load_cards

ROOT = Path(__file__).resolve().parent.parent
#: KB name -> (its cards, the folder of its labelled questions).
SETS = {
    "demo": (ROOT / "kb" / "demo" / "cards.jsonl", ROOT / "kb" / "eval"),
    "zulip": (ROOT / "evals" / "zulip-help.jsonl", ROOT / "kb" / "eval" / "zulip"),
    "fastapi": (ROOT / "evals" / "fastapi-docs.jsonl", ROOT / "kb" / "eval" / "fastapi"),
}
_QUOTE = re.compile(r"(.*?)\s*\[(\d+)\]([.!?。！？]*)\s*", re.S)


def quotes_of(content: str) -> list[tuple[str, int]]:
    """Each quoted unit of an extractive answer (its text, punctuation kept) and its number."""
    return [(m.group(1).strip() + m.group(3), int(m.group(2))) for m in _QUOTE.finditer(content)]


def _norm(text: str) -> str:
    return " ".join(text.split()).rstrip(" .!?;:,").lower()


@dataclass
class _Kb:
    """One ingested KB and the judges, shared by the splits measured."""

    cards: dict[str, KbCard]
    retriever: HybridRetriever
    generator: ExtractiveGenerator
    support: SupportJudge
    nuggets: NuggetJudge


def measure(kb: _Kb, labels_dir: Path, split: str, show: bool) -> dict[str, Any]:
    """The figures of one split (see the module docstring)."""
    questions = load_questions(labels_dir / f"questions.{split}.jsonl")
    rows = read_jsonl(
        labels_dir / f"nuggets.{split}.jsonl",
        "nuggets",
        lambda row: (
            str(row["id"]),
            tuple(zip(row["nuggets"], nugget_audiences(row), strict=True)),
        ),
    )
    nuggets = {qid: tuple(n for n, a in pairs if a == "member") for qid, pairs in rows}
    staff = {qid: tuple(n for n, a in pairs if a == "staff") for qid, pairs in rows}
    # What an answer may quote of a card: an internal card's reply, a public card's body.
    units = {
        cid: outline(c.body if c.is_external else c.reply or "").units
        for cid, c in kb.cards.items()
    }
    whole = {cid: {_norm(u.text) for u in us} for cid, us in units.items()}
    heading_of = {cid: {_norm(u.text): u.heading for u in us} for cid, us in units.items()}
    totals = {"answers": 0, "quotes": 0, "fragments": 0, "mixed_sections": 0}
    stated = n_nuggets = sentences = off = 0
    n_staff = leaked = leaked_control = 0
    openings: list[Opening] = []
    fragments: list[str] = []
    for q in questions:
        context = kb.retriever.retrieve(q.question, cards=EVERY_CARD).chunks
        content = kb.generator.generate(q.question, context).text
        ranking = tuple(c.id for c in context)
        answered = bool(context) and content != NO_ANSWER
        quoted = quotes_of(content) if answered else []
        openings.append(
            Opening(q.id, ranking, ranking[quoted[0][1] - 1] if quoted else None, q.gold)
        )
        headings: dict[str, set[str]] = {}
        for text, n in quoted:
            cid = ranking[n - 1]
            totals["quotes"] += 1
            if _norm(text) not in whole[cid]:
                totals["fragments"] += 1
                fragments.append(f"{q.id}: {text}")
            if heading := heading_of[cid].get(_norm(text), ""):
                headings.setdefault(cid, set()).add(heading)
        q_terms = content_terms(q.question)
        totals["mixed_sections"] += any(
            len(hs) > 1 and not all(content_terms(h) <= q_terms for h in hs)
            for hs in headings.values()
        )
        totals["answers"] += 1
        prose = re.sub(r"\s*\[\d+\]", "", content) if answered else ""
        for nugget in nuggets.get(q.id, ()):
            n_nuggets += 1
            stated += kb.nuggets.stated(nugget, prose)
        notes = "\n\n".join(kb.cards[g].body for g in q.gold if not kb.cards[g].is_external)
        for nugget in staff.get(q.id, ()):
            n_staff += 1
            leaked += kb.nuggets.stated(nugget, prose)
            leaked_control += kb.nuggets.stated(nugget, notes)
        offs: list[str] = []
        if answered:
            total, offs = off_topic_sentences(content, q.gold, kb.support)
            sentences += total
            off += len(offs)
        if show:
            print(f"\n[{q.id}] {q.question}\n  gold {q.gold} ranked {ranking[:3]}\n  {content}")
            for sentence in offs:
                print(f"  off topic: {sentence}")
    return {
        "split": split,
        **totals,
        "fragment_rate": round(totals["fragments"] / max(1, totals["quotes"]), 4),
        "first_sentence": first_sentence_rate(openings).as_dict(),
        "first_sentence_control": first_sentence_rate(from_lowest_ranked(openings)).as_dict(),
        "nugget_recall": round(stated / max(1, n_nuggets), 4),
        "off_topic_rate": round(off / max(1, sentences), 4),
        "staff_nuggets": n_staff,
        "staff_nuggets_leaked": leaked,
        "staff_nuggets_leaked_control": leaked_control,
        "fragment_examples": fragments[:5],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", choices=sorted(SETS), default="zulip")
    parser.add_argument("--split", choices=("dev", "test"), action="append")
    parser.add_argument(
        "--show", action="store_true", help="print each answer and its off-topic sentences"
    )
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    cards_path, labels_dir = SETS[args.kb]
    demo_cards = {c.id: c for c in load_cards([SETS["demo"][0]])}
    with tempfile.TemporaryDirectory(prefix="citewall-structure-") as tmp:
        settings = load_settings(data_dir=Path(tmp), database_url=None, chroma_url=None)
        model = load_embedder(settings)
        ingest_paths([cards_path], settings, embedder=model, progress=False)
        demo_judge = SupportJudge(model, demo_cards)
        calibrate(demo_judge, load_labels(require(SUPPORT_LABELS)))
        nugget_judge = NuggetJudge(model)
        nugget_judge.calibrate(load_nugget_labels())
        cards = {c.id: c for c in load_cards([cards_path])}
        kb = _Kb(
            cards=cards,
            retriever=build_retriever(settings, embedder=model, reranker=None),
            generator=ExtractiveGenerator(kb_embedder(settings, model)),
            support=SupportJudge(model, cards, thresholds=demo_judge.thresholds),
            nuggets=nugget_judge,
        )
        result = {
            "kb": args.kb,
            "splits": [
                measure(kb, labels_dir, split, args.show) for split in args.split or ["dev"]
            ],
        }
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
