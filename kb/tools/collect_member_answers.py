"""Regenerate the member answers behind ``kb/eval/dangling_labels.jsonl`` (unlabelled).

Builds the evaluation workspace (demo and hostile KBs, the real app), then asks a fixed set of
questions on ``POST /api/v1/chat`` as a member with each generator and writes what the member
received (the ``answer`` prose) as JSONL: ``{"set", "generator", "question_id",
"question", "answer"}``. The labels file holds the same rows plus ``dangling``, ``spans`` and
``note``, written by reading each answer.

Two label sets (``PLAN``): ``dev``, dev questions stratified by kind (``questions.stratified``)
and the first direct and hostile-card red-team cases; ``holdout``, test questions and later
red-team cases. ``--check LABELS`` reports which labelled answers come back word for word. Run
from the repository root (~25 min on 2 cores, nearly all of it SmolLM2):

    HF_HUB_OFFLINE=1 python kb/tools/collect_member_answers.py --out reports/member_answers.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from citewall_evals.data import HOSTILE_CARDS, REDTEAM_QUESTIONS
from citewall_evals.generators import GENERATORS, generator_apps
from citewall_evals.member_answers import ask_as_member
from citewall_evals.questions import Asked, labelled_split, stratified
from citewall_evals.redteam.cases import indirect_cases, load_direct_cases
from citewall_evals.redteam.catalogue import load_cards
from citewall_evals.workspace import build_workspace

#: Per label set and generator: (split, questions of the split stratified by kind, direct
#: red-team cases, hostile-card cases). "dev" answers were read before the detector was
#: written; "holdout" answers were labelled after it was written and never used to change it.
PLAN: dict[str, dict[str, tuple[str, int, slice, slice]]] = {
    "dev": {
        "extractive": ("dev", 30, slice(0, 6), slice(0, 4)),
        "adversary": ("dev", 2, slice(0, 3), slice(0, 3)),
        "smollm2": ("dev", 26, slice(0, 8), slice(0, 8)),
    },
    "holdout": {
        "extractive": ("test", 12, slice(6, 12), slice(4, 10)),
        "adversary": ("test", 1, slice(3, 4), slice(3, 4)),
        "smollm2": ("test", 12, slice(8, 14), slice(8, 14)),
    },
}


def questions_for(label_set: str, generator: str) -> list[Asked]:
    split, n, direct, indirect = PLAN[label_set][generator]
    asked = stratified(labelled_split(split), n)
    cases = [
        *load_direct_cases(REDTEAM_QUESTIONS)[direct],
        *indirect_cases(load_cards([HOSTILE_CARDS]))[indirect],
    ]
    return [*asked, *cases]


def collect(generators: list[str], label_sets: list[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="citewall-answers-") as tmp:
        ws = build_workspace(Path(tmp) / "data")
        try:
            with generator_apps(ws, generators) as apps:
                for label_set in label_sets:
                    for name, app in apps.items():
                        questions = questions_for(label_set, name)
                        print(f"{label_set} {name}: {len(questions)} questions", file=sys.stderr)
                        with TestClient(app, raise_server_exceptions=False) as client:
                            answers = ask_as_member(client, questions, ws.tokens.member, name)
                        for a in answers:
                            if not a.ok:
                                print(f"  {a.question_id}: HTTP {a.status}", file=sys.stderr)
                            rows.append(
                                {
                                    "set": label_set,
                                    "generator": a.generator,
                                    "question_id": a.question_id,
                                    "question": a.question,
                                    "answer": a.answer,
                                }
                            )
        finally:
            ws.close()
    return rows


def check(rows: list[dict[str, Any]], labels: Path) -> None:
    fresh = {(r["set"], r["generator"], r["question_id"]): r["answer"] for r in rows}
    same = differ = 0
    for line in labels.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        key = (row["set"], row["generator"], row["question_id"])
        if key not in fresh:
            continue
        if fresh[key] == row["answer"]:
            same += 1
        else:
            differ += 1
            print(f"  differs: {' '.join(key)}", file=sys.stderr)
    print(f"{same} labelled answers reproduced word for word, {differ} differ", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    parser.add_argument("--generators", default=",".join(GENERATORS), help="comma-separated subset")
    parser.add_argument("--sets", default="dev,holdout", help="label sets: dev, holdout")
    parser.add_argument("--check", type=Path, help="labels file to compare with")
    args = parser.parse_args()
    sets = [s for s in args.sets.split(",") if s]
    unknown = sorted(set(sets) - set(PLAN))
    if unknown:
        parser.error(f"unknown label set {unknown[0]!r}; use {', '.join(PLAN)}")
    rows = collect([g for g in args.generators.split(",") if g], sets)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} answers -> {args.out}", file=sys.stderr)
    if args.check:
        check(rows, args.check)


if __name__ == "__main__":
    main()
