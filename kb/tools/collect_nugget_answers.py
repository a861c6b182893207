"""Collect the extractive answers to the dev questions behind ``kb/eval/nugget_labels.jsonl``.

Builds the evaluation workspace (demo and hostile KBs, the real app with the shipped extractive
generator), asks every labelled question of a split on ``POST /api/v1/chat`` as a member, each
in a new conversation, and writes what the member received as JSONL: ``{"question_id",
"question", "answer"}`` (``answer`` is the member prose). The labels file pairs these answers
with the nuggets of ``kb/eval/nuggets.dev.jsonl`` and says, read by hand, whether each answer
states each nugget. Run from the repository root (a few minutes on 2 cores):

    HF_HUB_OFFLINE=1 python kb/tools/collect_nugget_answers.py --out reports/nugget_answers.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from citewall_evals.generators import generator_apps
from citewall_evals.member_answers import ask_as_member
from citewall_evals.questions import labelled_split
from citewall_evals.workspace import build_workspace

GENERATOR = "extractive"


def collect(split: str) -> list[dict[str, Any]]:
    """``{"question_id", "question", "answer"}`` for every labelled question of ``split``."""
    questions = labelled_split(split)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="citewall-nugget-answers-") as tmp:
        ws = build_workspace(Path(tmp) / "data")
        try:
            with generator_apps(ws, [GENERATOR]) as apps:
                print(f"{split} {GENERATOR}: {len(questions)} questions", file=sys.stderr)
                with TestClient(apps[GENERATOR], raise_server_exceptions=False) as client:
                    answers = ask_as_member(client, questions, ws.tokens.member, GENERATOR)
                for a in answers:
                    if not a.ok:
                        print(f"  {a.question_id}: HTTP {a.status}", file=sys.stderr)
                    rows.append(
                        {"question_id": a.question_id, "question": a.question, "answer": a.answer}
                    )
        finally:
            ws.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    parser.add_argument("--split", default="dev", choices=("dev", "test"), help="question split")
    args = parser.parse_args()
    rows = collect(args.split)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} answers -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
