"""``citewall eval extraction``: attackers against the demo KB with defences off and on, the
honest workload against the budget, the controls, and the report.

Stages: the workspace (the demo KB only, ingested into a throwaway data dir), the judge
calibration, the metric controls, one run per (defences, attack) pair, the honest workload,
and the report (``report``).
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citewall.errors import UserError
from citewall.retrieval.protocols import Embedder
from citewall_evals.answering import SMALL_TALK
from citewall_evals.data import DEMO_CARDS
from citewall_evals.extraction.adaptive import AdaptiveAttacker
from citewall_evals.extraction.attack import (
    OFF,
    Defences,
    RunResult,
    Scoring,
    defaults_on,
    run_one,
)
from citewall_evals.extraction.attackers import Attacker, NaiveAttacker, ScriptedAttacker
from citewall_evals.extraction.clock import EPOCH
from citewall_evals.extraction.facts import fact_controls, internal_facts
from citewall_evals.extraction.honest import Model, honest_items, plan_members
from citewall_evals.extraction.recovered import controls, internal_text
from citewall_evals.extraction.runner import FAST, PATIENT, Pace
from citewall_evals.extraction.workload import capture_exposures, honest_outcomes
from citewall_evals.quality.answers import NuggetJudge, load_nugget_labels, load_nuggets
from citewall_evals.questions import labelled_split
from citewall_evals.redteam.catalogue import load_cards
from citewall_evals.workspace import EvalWorkspace, build_workspace

SPLITS = ("test", "dev")
CHECKPOINTS = (50, 200, 500)
CURVE_EVERY = 25
HONEST_MEMBERS = 24
HONEST_DAYS = 30


@dataclass(frozen=True, slots=True)
class Attack:
    """An attacker and the pace it asks at."""

    attacker: str  # adaptive | naive
    pace: Pace

    @property
    def name(self) -> str:
        return f"{self.attacker} {self.pace.name}"


ATTACKS = (Attack("adaptive", FAST), Attack("adaptive", PATIENT), Attack("naive", FAST))


@dataclass(slots=True)
class ExtractionOptions:
    queries: int = 500
    fast: bool = False
    seed: int = 0
    out: Path = Path("reports")
    work_dir: Path | None = None
    attacks: Sequence[Attack] = ATTACKS
    #: The protected setting (``defaults_on()`` when None); the unprotected one is ``OFF``
    #: with the same rate limit.
    on: Defences | None = None
    honest: bool = True
    judge_facts: bool = True
    members: int = HONEST_MEMBERS
    days: int = HONEST_DAYS

    @property
    def splits(self) -> tuple[str, ...]:
        """Splits of the honest workload's items: the test split alone in --fast mode."""
        return ("test",) if self.fast else SPLITS


@dataclass(slots=True)
class ExtractionResult:
    options: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    controls: dict[str, Any] = field(default_factory=dict)
    runs: list[RunResult] = field(default_factory=list)
    honest: dict[str, Any] = field(default_factory=dict)
    checkpoints: tuple[int, ...] = CHECKPOINTS

    def as_dict(self) -> dict[str, Any]:
        return {
            "options": self.options,
            "environment": self.environment,
            "controls": self.controls,
            "checkpoints": list(self.checkpoints),
            "runs": [r.summary(self.checkpoints) for r in self.runs],
            "curves": {r.name: curves(r) for r in self.runs},
            "honest": self.honest,
        }


def curves(run: RunResult, every: int = CURVE_EVERY) -> dict[str, list[list[float]]]:
    """Each metric every ``every`` questions (and after the last), as [question, value]."""
    points = sorted({*range(every, run.queries + 1, every), run.queries} - {0})
    return {
        metric: [[n, round(run.at(curve, n), 4)] for n in points]
        for metric, curve in (
            ("recovered", run.recovered),
            ("recovered_with_public", run.recovered_with_public),
            ("touched", run.touched),
            ("facts", run.facts),
        )
    }


def make_attacker(kind: str, seed: int) -> Attacker:
    if kind == "adaptive":
        return AdaptiveAttacker(seed)
    if kind == "naive":
        questions = [q for split in SPLITS for q in labelled_split(split)]
        return NaiveAttacker(questions, seed)
    raise ValueError(f"unknown attacker {kind!r}; use adaptive or naive")


def scoring_for(ws: EvalWorkspace, judge_facts: bool) -> tuple[Scoring, dict[str, Any]]:
    """What runs are scored against, and the controls of each metric that need no run."""
    cards = load_cards([DEMO_CARDS])
    text = internal_text(cards)
    internal_ids = frozenset(c.id for c in cards if not c.is_external)
    # Every fact of an internal card, member-facing or staff-only, counts as recovered text.
    nuggets = {k: v for split in SPLITS for k, v in load_nuggets(split, audience=None).items()}
    questions = [q for split in SPLITS for q in labelled_split(split)]
    facts = internal_facts(questions, nuggets, internal_ids)
    out: dict[str, Any] = {"recovered": controls(text, cards)}
    judge: NuggetJudge | None = None
    if judge_facts:
        judge = NuggetJudge(ws.embedder)
        out["nugget_judge"] = judge.calibrate(load_nugget_labels()).as_dict()["leave_one_out"]
        out["facts"] = fact_controls(facts, {c.id: c for c in cards}, judge)
    with_public = internal_text(cards, keep_public=True)
    return Scoring(text, with_public, internal_ids, facts, judge), out


def run_extraction(
    options: ExtractionOptions,
    *,
    workspace: EvalWorkspace | None = None,
    embedder: Embedder | None = None,
    progress: Callable[[str], None] | None = None,
) -> ExtractionResult:
    """Every run of ``options`` (a workspace is built, and released, unless one is given)."""
    say = progress or (lambda _msg: None)
    tmp: tempfile.TemporaryDirectory[str] | None = None
    ws = workspace
    try:
        if ws is None:
            say("building the workspace (embedder, demo KB, users)")
            if options.work_dir is None:
                tmp = tempfile.TemporaryDirectory(prefix="citewall-extraction-")
                root = Path(tmp.name)
            else:
                root = options.work_dir
            ws = build_workspace(root / "data", kb_paths=(DEMO_CARDS,), embedder=embedder)
        return _measure(ws, options, say)
    finally:
        if workspace is None and ws is not None:
            ws.close()
        if tmp is not None:
            tmp.cleanup()


def _measure(
    ws: EvalWorkspace, options: ExtractionOptions, say: Callable[[str], None]
) -> ExtractionResult:
    on = options.on or defaults_on()
    off = dataclasses.replace(OFF, rate_limit_per_minute=on.rate_limit_per_minute)
    result = ExtractionResult(
        checkpoints=tuple(
            sorted({*(n for n in CHECKPOINTS if n < options.queries), options.queries})
        )
    )
    result.options = {
        "queries": options.queries,
        "seed": options.seed,
        "fast": options.fast,
        "defences_on": on.overrides,
        "defences_off": off.overrides,
        "paces": {a.pace.name: a.pace.gap_s for a in options.attacks},
    }
    say("calibrating the nugget judge; metric controls" if options.judge_facts else "controls")
    scoring, result.controls = scoring_for(ws, options.judge_facts)
    result.environment = {
        "kb": str(DEMO_CARDS.relative_to(DEMO_CARDS.parents[2])),
        "internal_cards": len(scoring.internal_ids),
        "internal_sentences": len(scoring.text),
        "internal_sentences_public": scoring.text.public,
        "internal_card_sentences": scoring.text.card_sentences,
        "internal_facts": len(scoring.facts),
    }
    negative = run_one(
        ws,
        name="control: small talk",
        attacker=ScriptedAttacker("small-talk", SMALL_TALK),
        pace=FAST,
        defences=off,
        queries=len(SMALL_TALK),
        scoring=scoring,
    )
    result.controls["touched_small_talk"] = negative.at(negative.touched, negative.queries)
    for defences in (off, on):
        for attack in options.attacks:
            name = f"{defences.name}: {attack.name}"
            say(f"{name}: {options.queries} questions")
            result.runs.append(
                run_one(
                    ws,
                    name=name,
                    attacker=make_attacker(attack.attacker, options.seed),
                    pace=attack.pace,
                    defences=defences,
                    queries=options.queries,
                    scoring=scoring,
                )
            )
    if options.honest:
        result.honest = honest_workload(ws, options, on, scoring.internal_ids, say)
        result.controls["touched_every_labelled_question"] = result.honest["capture_touched"]
    return result


def honest_workload(
    ws: EvalWorkspace,
    options: ExtractionOptions,
    on: Defences,
    internal_ids: frozenset[str],
    say: Callable[[str], None],
) -> dict[str, Any]:
    """Capture every item once, then replay the focused and the uniform members."""
    budget = on.budget
    if budget is None:
        raise UserError("the honest workload needs an exposure budget (exposure_budget_cards)")
    items = honest_items(options.splits)
    say(f"honest workload: answering {len(items)} items once")
    captured = capture_exposures(ws, items, on, "honest-capture")
    out: dict[str, Any] = {
        "items": len(items),
        "turns": sum(len(i.turns) for i in items),
        "capture_failures": captured.failed,
        "capture_touched": len(captured.cards) / max(1, len(internal_ids)),
        "budget_cards": budget.cards,
        "window_hours": budget.window.total_seconds() / 3600,
        "members": options.members,
        "days": options.days,
    }
    models: tuple[Model, ...] = ("focused", "uniform")
    for model in models:
        plans = plan_members(
            items,
            members=options.members,
            days=options.days,
            start=EPOCH,
            model=model,
            seed=options.seed,
        )
        out[model] = honest_outcomes(plans, captured, budget)
    return out
