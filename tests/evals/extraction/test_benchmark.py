"""The extraction benchmark at a small scale on the real app: a tiny budget (5 cards) and 60
questions, the replay of the budget against real server turns, the rate limit on the fake
clock, and the report."""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from citewall.api.app import create_app
from citewall_evals.extraction.attack import (
    OFF,
    Defences,
    RunResult,
    defaults_on,
    new_member,
    protected_runtime,
)
from citewall_evals.extraction.attackers import ScriptedAttacker
from citewall_evals.extraction.benchmark import (
    Attack,
    ExtractionOptions,
    ExtractionResult,
    run_extraction,
)
from citewall_evals.extraction.budget import ReplayTurn, replay_budget
from citewall_evals.extraction.clock import EPOCH, FakeClock
from citewall_evals.extraction.honest import HonestItem
from citewall_evals.extraction.report import summary_table, write_report
from citewall_evals.extraction.runner import FAST, Pace, run_attack
from citewall_evals.extraction.stored import stored_answers
from citewall_evals.extraction.workload import capture_exposures
from citewall_evals.questions import labelled_split
from citewall_evals.report.svg import line_chart

TINY = dataclasses.replace(defaults_on(), exposure_budget_cards=5)


def run_of(result: ExtractionResult, name: str) -> RunResult:
    return next(r for r in result.runs if r.name == name)


@pytest.fixture(scope="module")
def tiny_run(eval_workspace: Any) -> ExtractionResult:
    options = ExtractionOptions(
        queries=60, attacks=(Attack("adaptive", FAST),), on=TINY, honest=False, judge_facts=False
    )
    return run_extraction(options, workspace=eval_workspace)


def test_defences_recover_less_and_flag_the_attacker(tiny_run: ExtractionResult) -> None:
    off, on = run_of(tiny_run, "off: adaptive fast"), run_of(tiny_run, "on: adaptive fast")
    assert off.queries == on.queries == 60
    assert off.recovered[-1] > 0.02  # the crawl works when nothing stops it
    assert on.recovered[-1] < off.recovered[-1]
    assert on.touched[-1] < off.touched[-1]
    assert off.flagged_at is None and off.restricted == 0 and off.alerts == 0
    assert on.flagged_at is not None and on.flagged_at <= 60
    assert on.alerts == 1  # one alert for the window, however many restricted answers
    assert on.restricted == 60 - on.flagged_at + 1
    assert tiny_run.controls["touched_small_talk"] == 0.0
    assert tiny_run.controls["recovered"]["all_internal_bodies"] == 1.0


def test_report_files_and_summary(tiny_run: ExtractionResult, tmp_path: Path) -> None:
    data = tiny_run.as_dict()
    files = write_report(data, tmp_path)
    assert json.loads(files["json"].read_text())["runs"][1]["flagged_at"] is not None
    svg = files["recovered"].read_text()
    assert svg.count("<polyline") == 2 and "stroke-dasharray" in svg  # off is dashed
    table = summary_table(data)
    assert table[0].startswith("| run | recovered@50 | recovered@60 |")
    assert any(line.startswith("| on: adaptive fast |") and "| q" in line for line in table)
    assert "## Controls" in files["markdown"].read_text()


def test_budget_replay_matches_the_server(eval_workspace: Any) -> None:
    """The same internal questions asked 30 minutes apart by a real member (budget 3 cards
    per 2 hours) and replayed from a capture: the same turns are restricted."""
    questions = [q for q in labelled_split("test") if q.kind == "internal"][:12]
    budget = dataclasses.replace(
        defaults_on(), exposure_budget_cards=3, exposure_window_hours=2.0, rate_limit_per_minute=0
    )
    gap = Pace("half-hourly", 1800.0)
    user_id, token = new_member(eval_workspace, "replay-check")
    clock = FakeClock()
    app = create_app(protected_runtime(eval_workspace, budget, clock))
    attacker = ScriptedAttacker("replay", [q.question for q in questions])
    with TestClient(app, raise_server_exceptions=False) as client:
        turns = run_attack(client, token, attacker, clock, gap, len(questions))
    stored = stored_answers(eval_workspace.runtime.session_factory, user_id)
    server = [stored[t.message_id].restricted is not None for t in turns]

    items = [HonestItem(q.id, (q.question,), frozenset()) for q in questions]
    captured = capture_exposures(eval_workspace, items, budget, "replay-capture")
    replay = replay_budget(
        [
            ReplayTurn(EPOCH + i * timedelta(seconds=gap.gap_s), captured.exposures[q.id][0])
            for i, q in enumerate(questions)
        ],
        budget.budget or pytest.fail("the check needs a budget"),
    )
    assert server == replay.restricted
    assert any(server) and not all(server[server.index(True) :])  # the window moved on


def test_the_fast_attacker_waits_out_the_rate_limit(eval_workspace: Any) -> None:
    limited = dataclasses.replace(OFF, rate_limit_per_minute=5)
    _, token = new_member(eval_workspace, "rate-limited")
    clock = FakeClock()
    app = create_app(protected_runtime(eval_workspace, limited, clock))
    with TestClient(app, raise_server_exceptions=False) as client:
        turns = run_attack(client, token, ScriptedAttacker("hi", ["hi"]), clock, FAST, 12)
    assert all(t.status == 200 for t in turns)
    assert sum(t.rate_limited for t in turns) >= 2
    assert clock.elapsed_s >= 120  # 12 questions at 5 a minute: two waits of a window


def test_defences_name_the_settings_they_change() -> None:
    assert OFF.overrides["exposure_budget_cards"] == 0
    assert OFF.overrides["max_internal_sentences"] == 0
    assert OFF.budget is None
    on = defaults_on()
    assert on.exposure_budget_cards > 0 and on.max_internal_sentences > 0
    assert isinstance(on, Defences) and on.budget is not None


def test_line_chart_escapes_names_and_scales_to_the_data() -> None:
    svg = line_chart(
        "a <title>", {"off: <x>": [(0, 0.0), (10, 0.5)]}, x_label="q", y_label="f", y_max=0.5
    )
    assert "<x>" not in svg and "&lt;x&gt;" in svg and "&lt;title&gt;" in svg
    assert svg.startswith("<svg") and svg.endswith("</svg>")
