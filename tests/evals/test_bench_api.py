"""`citewall bench api`: the report's targets and tables, and a tiny real run's shape.

The smoke run starts real servers (extractive, the OpenAI-compatible generator against the
scripted model, the full path's cross-encoder) on a small KB for a second of load; it checks
what the report holds, never how fast anything was.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from citewall_evals.bench.api import (
    EXTRACTIVE,
    OPENAI,
    ApiReport,
    Latency,
    LoadResult,
    StreamSeries,
    Target,
    TurnVsSearch,
    markdown,
    run,
)
from citewall_evals.data import QUESTIONS_DIR
from citewall_evals.questions import load_questions

SMALL_KB = Path(__file__).resolve().parents[1] / "api" / "kb" / "cards.jsonl"


def load(path: str, rps: float, p50: float, errors: int = 0) -> LoadResult:
    return LoadResult(
        path=path,
        reranker="disabled",
        clients=4,
        duration_s=20.0,
        requests=int(rps * 20),
        errors=errors,
        error_kinds={"HTTP 500": errors} if errors else {},
        requests_per_s=rps,
        p50_ms=p50,
        p95_ms=p50 * 2,
        mean_ms=p50,
        hybrid_paths={path: int(rps * 20)},
        client_cpu_cores=0.3,
        server_cpu_cores=1.5,
        loadavg_1m_before=1.0,
        loadavg_1m_after=2.0,
    )


def report(**changes: object) -> ApiReport:
    fields: dict[str, object] = {
        "kb": "kb/demo/cards.jsonl",
        "machine": "x86_64",
        "cpus": 2,
        "questions": 227,
        "warmup": 3,
        "clients": 4,
        "duration_s": 20.0,
        "streams": [
            StreamSeries(EXTRACTIVE, Latency(112, 45.0, 70.0), Latency(112, 50.0, 80.0)),
            StreamSeries(OPENAI, Latency(112, 90.0, 120.0, 1), Latency(111, 95.0, 130.0)),
        ],
        "turn_vs_search": TurnVsSearch(Latency(112, 60.0, 90.0), Latency(112, 25.0, 30.0), 2.4),
        "loads": [load("rrf_only", 31.0, 120.0), load("full", 4.0, 900.0)],
    }
    return ApiReport(**{**fields, **changes})  # type: ignore[arg-type]


def test_targets_say_met_or_missed_and_count_every_error() -> None:
    verdicts = {t.name: t.verdict for t in report().targets()}
    assert verdicts == {
        "chat turn p50 / search p50 (1 client)": "missed",
        "stream TTFT p50 ms, extractive (1 client)": "met",
        "rrf_only req/s (4 clients)": "met",
        "rrf_only p50 ms (4 clients)": "met",
        "full req/s (4 clients)": "missed",
        "errors (every request)": "missed",  # the scripted-model stream's one error
    }
    assert report().errors == 1


def test_a_figure_not_measured_is_neither_met_nor_missed() -> None:
    assert Target("x", None, 2, True).verdict == "not measured"
    assert Target("x", math.nan, 2, True).verdict == "not measured"
    skipped = report(streams=[], turn_vs_search=None, loads=[load("full", 6.0, 600.0)])
    verdicts = [t.verdict for t in skipped.targets()]
    assert verdicts == ["not measured"] * 4 + ["met", "met"]


def test_markdown_puts_targets_single_client_figures_ratios_and_load_side_by_side() -> None:
    md = markdown(report())
    assert "| chat turn p50 / search p50 (1 client) | <= 2 | 2.4 | missed |" in md
    assert "| stream TTFT p50 ms, extractive (1 client) | <= 60 | 45 | met |" in md
    assert "| stream, first token: extractive | 112 | 45.0 | 70.0 | 0 |" in md
    assert f"| stream, first token: {OPENAI} | 112 | 90.0 | 120.0 | 1 |" in md
    assert "| POST /api/v1/chat (extractive) | 112 | 60.0 | 90.0 | 0 |" in md
    assert "| POST /api/v1/search | 112 | 25.0 | 30.0 | 0 |" in md
    assert "turn / search 2.40" in md
    assert "first token, scripted model / extractive 2.00" in md
    assert "first token (extractive) / whole turn 0.75" in md
    assert "| rrf_only | 620 | 31.0 | 120.0 | 240.0 | 120.0 | 0 | rrf_only: 620 |" in md
    assert "| 0.30 (15% of 2) | 1.50 (75% of 2) | 1.0 -> 2.0 |" in md


@pytest.mark.slow  # three real servers start: ~1-2 min on two shared cores
def test_a_tiny_real_run_fills_every_part_of_the_report() -> None:
    dev = load_questions(QUESTIONS_DIR / "questions.dev.jsonl")
    questions = list(dict.fromkeys(q.question for q in dev))[:8]
    result = run(
        kb=SMALL_KB,
        questions=questions,
        paths=["rrf_only", "full"],
        clients=2,
        duration_s=1.0,
        warmup=1,
        rerank_budget_ms=60_000,
        single_questions=2,
    )
    assert [s.generator for s in result.streams] == [EXTRACTIVE, OPENAI]
    for series in result.streams:
        assert (series.first_token.n, series.first_token.errors) == (2, 0)
        assert series.first_token.p50_ms <= series.final.p50_ms
    assert result.turn_vs_search is not None
    assert (result.turn_vs_search.turn.n, result.turn_vs_search.search.n) == (2, 2)
    assert [r.path for r in result.loads] == ["rrf_only", "full"]
    for r in result.loads:
        assert r.requests > 0 and r.errors == 0
        assert set(r.hybrid_paths) == {r.path}
        assert r.server_cpu_cores is not None and r.server_cpu_cores > 0
    assert result.errors == 0
    md = markdown(result)
    assert md.count(" | met |") + md.count(" | missed |") == 6
    as_json = json.loads(json.dumps(result.as_json()))
    assert len(as_json["targets"]) == 6 and as_json["errors"] == 0
