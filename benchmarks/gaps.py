"""Precision and recall of the knowledge-gaps report on the demo's labelled questions.

Builds a throwaway workspace on the demo KB, asks every labelled question of both splits
(answerable and unanswerable) as a member through the real API, simulates ratings, then reads
the production report (``storage.gaps.gap_questions``) with the configured rule, with each
coverage threshold of a grid (chosen on dev), and with the earlier rule as the control
(``evals.quality.gaps`` says what counts as right). Prints a table and writes JSON:

    python benchmarks/gaps.py --out reports/gaps.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from citewall.retrieval.covered import GapRule, TurnRule, Verdict
from citewall.storage.gaps import GapQuestion, gap_questions
from citewall_evals.data import DEMO_CARDS
from citewall_evals.member_answers import MemberAnswer, ask_as_member
from citewall_evals.quality.abstention import load_unanswerable
from citewall_evals.quality.answers import NuggetJudge, load_nugget_labels, load_nuggets
from citewall_evals.quality.gaps import CoverageOnlyRule, GapLabels, PreviousRule, score_report
from citewall_evals.questions import Question, labelled_split
from citewall_evals.workspace import EvalWorkspace, build_workspace

SPLITS = ("dev", "test")
COVERAGE_GRID = tuple(round(0.1 * i, 1) for i in range(11))


def wrong_answers(ws: EvalWorkspace, answers: list[MemberAnswer], split: str) -> set[str]:
    """Questions whose answer was refused or states none of their gold facts."""
    judge = NuggetJudge(ws.embedder)
    judge.calibrate(load_nugget_labels())
    nuggets = load_nuggets(split)
    return {
        a.question
        for a in answers
        if a.answer_status != "answered"
        or not any(judge.stated(n, a.answer) for n in nuggets.get(a.question_id, ()))
    }


def rate(client: TestClient, token: str, answers: list[MemberAnswer], wrong: set[str]) -> int:
    """Every other wrong answer rated down, every other right one up; how many rated down."""
    headers = {"Authorization": f"Bearer {token}"}
    down = up = rated_down = 0
    for a in answers:
        if a.answer_status != "answered":
            continue
        if a.question in wrong:
            down += 1
            rating = "down" if down % 2 else None
        else:
            up += 1
            rating = "up" if up % 2 else None
        if rating is None:
            continue
        r = client.put(
            f"/api/v1/messages/{a.message_id}/feedback", json={"rating": rating}, headers=headers
        )
        r.raise_for_status()
        rated_down += rating == "down"
    return rated_down


def in_split(
    found: dict[Verdict, list[GapQuestion]], texts: set[str]
) -> dict[Verdict, list[GapQuestion]]:
    return {v: [q for q in qs if q.question in texts] for v, qs in found.items()}


def report(ws: EvalWorkspace, rule: TurnRule) -> dict[Verdict, list[GapQuestion]]:
    with ws.runtime.session_factory() as session:
        return gap_questions(session, rule=rule)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("reports/gaps.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="citewall-gaps-") as tmp:
        ws = build_workspace(Path(tmp) / "data", kb_paths=(DEMO_CARDS,))
        try:
            result = measure(ws)
        finally:
            ws.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for split in SPLITS:
        for name, row in result["splits"][split]["rules"].items():
            g, b = row["gaps"], row["answered_badly"]
            print(
                f"{split:<5} {name:<34} gaps P {g['precision']:.3f} R {g['recall']:.3f} "
                f"(covered listed {row['covered_listed_as_gaps']:>3})  answered badly "
                f"P {b['precision']:.3f} R {b['recall']:.3f}"
            )
    print(f"chosen on dev: min_coverage {result['chosen_min_coverage']}; written {args.out}")


def measure(ws: EvalWorkspace) -> dict[str, Any]:
    s = ws.settings
    configured = GapRule(s.knowledge_gap_min_coverage, s.knowledge_gap_support)
    labels: dict[str, GapLabels] = {}
    out: dict[str, Any] = {
        "configured": {
            "min_coverage": configured.min_coverage,
            "low_support": configured.low_support,
        },
        "splits": {},
    }
    with TestClient(ws.app_for("extractive"), raise_server_exceptions=False) as client:
        for split in SPLITS:
            answerable = labelled_split(split)
            unanswerable = [Question(u.id, u.question, ()) for u in load_unanswerable(split)]
            answers = ask_as_member(client, answerable, ws.tokens.member, "extractive")
            ask_as_member(client, unanswerable, ws.tokens.member, "extractive")
            wrong = wrong_answers(ws, answers, split)
            rated_down = rate(client, ws.tokens.member, answers, wrong)
            labels[split] = GapLabels(
                uncovered=frozenset(q.question for q in unanswerable),
                answered_badly=frozenset(wrong),
                covered=frozenset(q.question for q in answerable),
            )
            out["splits"][split] = {
                "answerable": len(answerable),
                "unanswerable": len(unanswerable),
                "answered_wrongly": len(wrong),
                "rated_down": rated_down,
            }
    rules: dict[str, TurnRule] = {
        "configured": configured,
        "control: earlier rule": PreviousRule(configured.low_support),
        "control: coverage alone": CoverageOnlyRule(
            configured.min_coverage, configured.low_support
        ),
    }
    grid = {c: GapRule(c, configured.low_support) for c in COVERAGE_GRID}
    found = {name: report(ws, rule) for name, rule in rules.items()}
    swept = {c: report(ws, rule) for c, rule in grid.items()}
    for split, lab in labels.items():
        texts = set(lab.uncovered | lab.covered)
        out["splits"][split]["rules"] = {
            name: score_report(in_split(f, texts), lab) for name, f in found.items()
        }
        out["splits"][split]["coverage_grid"] = {
            str(c): score_report(in_split(f, texts), lab) for c, f in swept.items()
        }
    dev = out["splits"]["dev"]["coverage_grid"]

    def f1(row: dict[str, Any]) -> float:
        p, r = row["gaps"]["precision"], row["gaps"]["recall"]
        return 2 * p * r / (p + r) if p + r else 0.0

    out["chosen_min_coverage"] = max(COVERAGE_GRID, key=lambda c: (f1(dev[str(c)]), -c))
    return out


if __name__ == "__main__":
    main()
