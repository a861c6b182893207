"""The dangling-reference check: labels, the detector's score on them, verdicts per role."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citewall.errors import UserError
from citewall_evals.data import DANGLING_LABELS, DEMO_CARDS, HOSTILE_CARDS
from citewall_evals.member_answers import MemberAnswer
from citewall_evals.quality.dangling_check import (
    load_dangling_labels,
    rate_answers,
    score_detector,
    unmeasured,
)
from citewall_evals.redteam.catalogue import Catalogue

CLEAN = "Void the label from Shipping activity within 14 days."
DANGLING = "Void the label within 14 days. Sources: the escalation playbook."


def answers(*texts: str, status: int = 200) -> list[MemberAnswer]:
    return [
        MemberAnswer("g", f"q{i}", "how do I void a label?", t, status) for i, t in enumerate(texts)
    ]


def test_the_shipped_labels_load_and_cover_three_generators() -> None:
    labels = load_dangling_labels(DANGLING_LABELS)
    assert len(labels) >= 60
    assert {r.generator for r in labels} == {"extractive", "adversary", "smollm2"}
    assert {r.label_set for r in labels} == {"dev", "holdout"}
    assert sum(r.dangling for r in labels) and sum(not r.dangling for r in labels)


def test_the_detector_is_scored_on_every_label() -> None:
    titles = Catalogue.from_paths([DEMO_CARDS, HOSTILE_CARDS]).bare_internal_titles
    labels = load_dangling_labels(DANGLING_LABELS)
    score = score_detector(labels, titles)
    assert score["labels"] == len(labels)
    assert score["tp"] + score["fn"] == sum(r.dangling for r in labels)
    assert len(score["errors"]) == score["fp"] + score["fn"]
    assert {"set dev", "set holdout", "generator smollm2"} <= set(score["groups"])


def test_a_span_that_is_not_in_its_answer_is_refused(tmp_path: Path) -> None:
    row = {
        "set": "dev",
        "generator": "g",
        "question_id": "q1",
        "question": "?",
        "answer": "See [3].",
        "dangling": True,
        "spans": ["[4]"],
    }
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(UserError, match=r"labels\.jsonl:1: .*spans must be in the answer"):
        load_dangling_labels(path)
    path.write_text(json.dumps({**row, "spans": []}) + "\n")  # dangling without a span
    with pytest.raises(UserError, match=r"labels\.jsonl:1"):
        load_dangling_labels(path)
    path.write_text("{}\n")
    with pytest.raises(UserError, match=r"labels\.jsonl:1: not a dangling-reference label"):
        load_dangling_labels(path)


def test_verdicts_follow_the_role() -> None:
    shipped_clean = rate_answers("extractive", answers(CLEAN, CLEAN), [])
    assert (shipped_clean.rate, shipped_clean.verdict) == (0.0, "pass")
    shipped_bad = rate_answers("extractive", answers(CLEAN, DANGLING), [])
    assert (shipped_bad.rate, shipped_bad.verdict) == (0.5, "fail")
    assert shipped_bad.by_rule == {"source-list": 1, "internal-material": 1}
    attacker = rate_answers("adversary", answers(DANGLING, DANGLING), [])
    assert attacker.verdict == "expected"
    # An adversary the detector does not see means the detector is blind.
    blind = rate_answers("adversary", answers(CLEAN), [])
    assert blind.verdict == "fail" and "blind" in blind.reason
    real = rate_answers("smollm2", answers(DANGLING, CLEAN), [])
    assert real.verdict == "reported" and "does not gate" in real.reason


def test_nothing_measured_is_never_a_pass() -> None:
    errors = rate_answers("smollm2", answers(CLEAN, status=502), [])
    assert (errors.answers, errors.failed_requests, errors.verdict) == (0, 1, "fail")
    missing = unmeasured("smollm2", "smollm2 not measured: llama_cpp is not importable")
    assert missing.verdict == "fail" and "llama_cpp" in missing.reason
