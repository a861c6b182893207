"""Regenerate the member answers behind ``kb/eval/dangling_labels.jsonl`` (unlabelled).

Builds the evaluation workspace (demo and hostile KBs, the real app), then asks a fixed set of
questions on ``POST /api/v1/chat`` as a member with each generator and writes what the member
received (the ``answer`` prose) as JSONL: ``{"generator", "question_id", "question",
"answer"}``. The labels file holds the same rows plus ``label``, ``span`` and ``note``, written
by reading each answer.

The set, per generator, in file order: the dev questions stratified by kind (``harness.
stratified``), the first direct red-team cases and the first indirect (hostile-card) cases.
``--check LABELS`` reports which labelled answers come back word for word. Run from the
repository root (~4 min on 2 cores, most of it SmolLM2):

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

from citewall.evals.catalogue import load_cards
from citewall.evals.generators import GENERATORS, generator_apps
from citewall.evals.harness import load_questions, stratified
from citewall.evals.member_answers import ask_as_member
from citewall.evals.redteam_cases import indirect_cases, load_direct_cases
from citewall.evals.workspace import HOSTILE_CARDS, REDTEAM_QUESTIONS, build_workspace

#: (dev questions, direct red-team cases, indirect cases) asked per generator.
PLAN = {
    "extractive": (30, 6, 4),
    "adversary": (2, 3, 3),
    "smollm2": (26, 8, 8),
}


def questions_for(generator: str) -> list[dict[str, Any]]:
    n_dev, n_direct, n_indirect = PLAN[generator]
    dev = stratified(load_questions("dev"), n_dev)
    direct = load_direct_cases(REDTEAM_QUESTIONS)[:n_direct]
    indirect = indirect_cases(load_cards([HOSTILE_CARDS]))[:n_indirect]
    cases = [{"id": c.id, "question": c.question} for c in [*direct, *indirect]]
    return [{"id": q["id"], "question": q["question"]} for q in dev] + cases


def collect(generators: list[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="citewall-answers-") as tmp:
        ws = build_workspace(Path(tmp) / "data")
        try:
            with generator_apps(ws, generators) as apps:
                for name, app in apps.items():
                    questions = questions_for(name)
                    print(f"{name}: {len(questions)} questions", file=sys.stderr)
                    with TestClient(app, raise_server_exceptions=False) as client:
                        answers = ask_as_member(client, questions, ws.tokens.member, name)
                    for a in answers:
                        if not a.ok:
                            print(f"  {a.question_id}: HTTP {a.status}", file=sys.stderr)
                        rows.append(
                            {
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
    fresh = {(r["generator"], r["question_id"]): r["answer"] for r in rows}
    same = differ = 0
    for line in labels.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        key = (row["generator"], row["question_id"])
        if key not in fresh:
            continue
        if fresh[key] == row["answer"]:
            same += 1
        else:
            differ += 1
            print(f"  differs: {key[0]} {key[1]}", file=sys.stderr)
    print(f"{same} labelled answers reproduced word for word, {differ} differ", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    parser.add_argument("--generators", default=",".join(GENERATORS), help="comma-separated subset")
    parser.add_argument("--check", type=Path, help="labels file to compare with")
    args = parser.parse_args()
    rows = collect([g for g in args.generators.split(",") if g])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} answers -> {args.out}", file=sys.stderr)
    if args.check:
        check(rows, args.check)


if __name__ == "__main__":
    main()
