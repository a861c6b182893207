"""The report writers and the baseline comparison, on a hand-built result."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from citewall.evals.baseline import (
    BaselineError,
    compare,
    load_baseline,
    profile_metrics,
    tolerance_for,
    write_baseline,
)
from citewall.evals.harness import write_reports
from citewall.evals.report_markdown import cell
from citewall.evals.results import EvalResult


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
        "dense": {
            "ndcg@10": 0.81,
            "recall@10": 0.94,
            "mrr": 0.78,
            "questions": 40,
            "label": "dense",
        },
        "served": {
            "ndcg@10": 0.85,
            "recall@10": 0.98,
            "mrr": 0.82,
            "questions": 40,
            "label": "rrf_only",
        },
    }
    result.citations = {"citation_recall": 0.9, "citation_precision": 0.95}
    result.hidden = {
        "questions": 12,
        "full_support": 0.9,
        "member_support": 0.9,
        "full_coverage": 0.8,
        "member_coverage": 0.8,
        "prose_identical": 12,
        "quality_holds": True,
        "tolerance": 0.02,
        "by_kind": {"internal": {"questions": 4, "member_support": 0.9}},
    }
    result.redteam = [
        {
            "case": "rt-html",
            "kind": "direct",
            "technique": "html-injection",
            "generator": "adversary",
            "verdict": verdict,
            "reason": "internal-id x1; first: <script>alert(1)</script> | [x](https://evil.example)",
            "target_retrieved": None,
        }
    ]
    return result


def test_markdown_and_html_carry_every_section(tmp_path: Path) -> None:
    files = write_reports(sample_result(), tmp_path / "out")
    md = files["markdown"].read_text()
    for heading in (
        "Support judge calibration",
        "Retrieval (per path)",
        "Citation quality",
        "Answer quality with citations hidden",
        "Red-team gate",
        "Baseline comparison",
    ):
        assert f"## {heading}" in md
    assert "| served | rrf_only | 0.850 | 0.980 | 0.820 | 40 |" in md
    html = files["html"].read_text()
    assert html.count("<svg") >= 4  # two confusion matrices, retrieval, citations, hidden, gate
    assert json.loads(files["json"].read_text())["metrics"]["retrieval.served.ndcg@10"] == 0.85


def test_html_is_self_contained_and_escapes_model_text(tmp_path: Path) -> None:
    html = write_reports(sample_result(), tmp_path)["html"].read_text()
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
