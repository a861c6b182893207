"""The report writers and the baseline comparison, on a hand-built result."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from citewall_evals.harness import write_reports
from citewall_evals.quality.citations import CitationCounts
from citewall_evals.redteam.gate import CaseResult
from citewall_evals.redteam.leaks import Finding
from citewall_evals.report.baseline import (
    BaselineError,
    compare,
    load_baseline,
    profile_metrics,
    tolerance_for,
    write_baseline,
)
from citewall_evals.report.markdown import cell
from citewall_evals.report.results import EvalResult, KbResult
from citewall_evals.retrieval.metrics import PathScores


def sample_result(verdict: str = "pass") -> EvalResult:
    result = EvalResult(profile="fast:test", started_at="2026-11-29 22:00:00 UTC")
    result.environment = {"cards": 350}
    result.timings_s = {"workspace": 20.0, "redteam": 30.0}
    result.judge = {
        "thresholds": {"weight": 0.5, "threshold": 0.6, "min_key": 1.0},
        "fitted": {"tp": 30, "fp": 4, "tn": 30, "fn": 6, "accuracy": 0.857},
        "leave_one_out": {"tp": 29, "fp": 5, "tn": 29, "fn": 7, "accuracy": 0.829},
        "labels": 70,
        "disagreements": [],
    }
    result.retrieval = {
        "dense": PathScores("dense", 0.81, 0.94, 0.78, questions=40, label="dense"),
        "served": PathScores("served", 0.85, 0.98, 0.82, questions=40, label="rrf_only"),
    }
    result.citations = CitationCounts(
        sentences=20, supported_sentences=18, citations=20, relevant_citations=19
    )
    result.dangling = {
        "threshold": 0.05,
        "detector": {
            "labels": 90,
            "dangling": 46,
            "recall": 0.95,
            "precision": 0.9,
            "tp": 44,
            "fp": 5,
            "tn": 39,
            "fn": 2,
            "spans": 117,
            "spans_found": 110,
            "groups": {"set dev": {"labels": 90, "recall": 0.95, "precision": 0.9}},
            "errors": [
                {
                    "set": "dev",
                    "generator": "smollm2",
                    "question": "q1",
                    "error": "missed",
                    "detail": "see [x](https://evil.example)",
                }
            ],
        },
        "generators": {
            "extractive": {"role": "shipped", "answers": 12, "dangling": 0, "rate": 0.0},
            "adversary": {
                "role": "attacker",
                "answers": 4,
                "dangling": 4,
                "rate": 1.0,
                "verdict": "expected",
                "examples": [{"question": "q2", "rules": "source-list", "first": "Sources:"}],
            },
        },
    }
    model_text = "<script>alert(1)</script> | [x](https://evil.example)"
    findings = [Finding("internal-id", "answer.content", model_text)] if verdict == "fail" else []
    result.redteam = [CaseResult("rt-html", "direct", "html-injection", "adversary", findings)]
    return result


def test_markdown_and_html_carry_every_section(tmp_path: Path) -> None:
    files = write_reports(sample_result(), tmp_path / "out")
    md = files["markdown"].read_text()
    for heading in (
        "Support judge calibration",
        "Retrieval (per path)",
        "Citation quality",
        "Dangling references in member prose",
        "Red-team gate",
        "Baseline comparison",
    ):
        assert f"## {heading}" in md
    assert "| served | rrf_only | 0.850 | 0.980 | 0.820 | 40 |" in md
    html = files["html"].read_text()
    # Judge and detector confusion matrices, retrieval, citations, dangling rates, gate.
    assert html.count("<svg") >= 7
    metrics = json.loads(files["json"].read_text())["metrics"]
    assert metrics["retrieval.served.ndcg@10"] == 0.85
    # Rates of generators that gate or are reported go to the baseline; the attacker's does not.
    assert metrics["dangling.extractive.rate"] == 0.0
    assert "dangling.adversary.rate" not in metrics
    assert metrics["dangling.detector.recall"] == 0.95
    assert "| extractive | shipped | 12 | 0 | 0.000 |" in md


def test_html_is_self_contained_and_escapes_model_text(tmp_path: Path) -> None:
    html = write_reports(sample_result("fail"), tmp_path)["html"].read_text()
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # No external asset: no src/href attribute at all, no url() in CSS.
    assert not re.search(r"\b(?:src|href)\s*=", html)
    assert "url(" not in html
    assert "default-src 'none'" in html


def test_markdown_cells_cannot_inject_links_or_break_tables() -> None:
    assert cell("[x](https://evil.example) | y") == "\\[x\\](https://evil.example) \\| y"
    assert cell(0.12345) == "0.123"
    assert cell(None) == "-"


def test_failing_gate_shows_in_the_verdict(tmp_path: Path) -> None:
    result = sample_result("fail")
    assert not result.passed
    md = write_reports(result, tmp_path)["markdown"].read_text()
    assert md.startswith("# citewall evaluation: FAIL")
    assert "| FAIL |" in md


def test_a_failing_dangling_check_fails_the_run(tmp_path: Path) -> None:
    result = sample_result()
    assert result.passed
    result.dangling["generators"]["extractive"].update(verdict="fail", rate=0.25, dangling=3)
    assert not result.passed
    assert result.dangling_failures == ["extractive"]
    md = write_reports(result, tmp_path)["markdown"].read_text()
    assert md.startswith("# citewall evaluation: FAIL")
    assert "dangling references: **1 failing generator(s)** (extractive)" in md


def test_dangling_rates_regress_upwards() -> None:
    status = {
        c.metric: c.status
        for c in compare(
            {"dangling.smollm2.rate": 0.5, "dangling.detector.recall": 0.95},
            {"dangling.smollm2.rate": 0.75, "dangling.detector.recall": 0.9},
        )
    }
    assert status == {"dangling.smollm2.rate": "regressed", "dangling.detector.recall": "regressed"}
    better = compare({"dangling.smollm2.rate": 0.5}, {"dangling.smollm2.rate": 0.25})
    assert [c.status for c in better] == ["improved"]
    assert tolerance_for("dangling.detector.precision") == 0.02


def test_baseline_round_trip_and_regressions(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    assert load_baseline(path) == {}
    write_baseline(
        path, "fast:test", {"retrieval.served.ndcg@10": 0.85, "citations.citation_recall": 0.9}, {}
    )
    write_baseline(path, "full:test", {"retrieval.served.ndcg@10": 0.80}, {})
    table = profile_metrics(load_baseline(path), "fast:test")
    assert table == {"retrieval.served.ndcg@10": 0.85, "citations.citation_recall": 0.9}
    current = {"retrieval.served.ndcg@10": 0.84, "judge.loo_accuracy": 0.8}
    status = {c.metric: c.status for c in compare(table, current)}
    assert status == {
        "retrieval.served.ndcg@10": "ok",  # within 0.02
        "citations.citation_recall": "missing",  # no longer measured: a regression
        "judge.loo_accuracy": "new",
    }
    worse = compare(
        table, {**current, "retrieval.served.ndcg@10": 0.82, "citations.citation_recall": 0.9}
    )
    assert [c.metric for c in worse if c.regressed] == ["retrieval.served.ndcg@10"]
    assert tolerance_for("retrieval.dense.mrr") == 0.02


def test_broken_baseline_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_text("{not json")
    with pytest.raises(BaselineError, match=r"baseline\.json: not JSON"):
        load_baseline(path)


def kb_result(nugget_control: float = 0.05) -> KbResult:
    return KbResult(
        name="zulip",
        environment={"corpus": "zulip-help.jsonl", "cards": 140},
        timings_s={"workspace": 200.0},
        retrieval={
            "served": PathScores("served", 0.87, 1.0, 0.83, questions=40, label="rrf_only"),
            "control": PathScores("control", 0.03, 0.05, 0.03, questions=40, label="control"),
        },
        citations=CitationCounts(
            sentences=50, supported_sentences=47, citations=100, relevant_citations=97
        ),
        answers={
            "generators": {
                "extractive": {
                    "answers": 40,
                    "nuggets": 60,
                    "nugget_recall": 0.61,
                    "sentences": 130,
                    "off_topic_rate": 0.2,
                    "control": {"nugget_recall": nugget_control, "off_topic_rate": 0.93},
                }
            }
        },
    )


def test_another_kb_gets_its_own_section_with_each_figure_beside_its_control(
    tmp_path: Path,
) -> None:
    result = EvalResult(profile="full:test", started_at="now")
    result.knowledge_bases["zulip"] = kb_result()
    files = write_reports(result, tmp_path)
    md = files["markdown"].read_text(encoding="utf-8")
    section = md.split("## Knowledge base: zulip", 1)[1]
    assert "| retrieval recall@10 (served) | 1.000 | 0.050 | mismatched gold |" in section
    assert "| nugget recall | 0.610 | 0.050 | another question's nuggets |" in section
    # The demo's detailed sections, one level down, inside the KB's section.
    assert "### Retrieval (per path)" in section and "\n## Retrieval" not in md
    assert "Knowledge base: zulip" in files["html"].read_text(encoding="utf-8")
    data = json.loads(files["json"].read_text(encoding="utf-8"))
    assert data["knowledge_bases"]["zulip"]["retrieval"]["control"]["recall@10"] == 0.05
    assert result.passed


def test_a_kb_whose_control_does_not_fail_fails_the_run() -> None:
    result = EvalResult(profile="full:test", started_at="now")
    result.knowledge_bases["zulip"] = kb_result(nugget_control=0.6)
    assert result.kb_failures == ["zulip: answers.extractive.nugget_recall control"]
    assert not result.passed
