"""`citewall bench capacity`'s pure parts: the sizing arithmetic, the line fit, the report.

No server runs here (the benchmark itself is run by hand: docs/capacity.md); these pin the
rules that turn measured figures into the guide's, and the tables that carry them.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall_evals.bench.api import LoadResult
from citewall_evals.bench.capacity import CapacityReport, WorkerRun
from citewall_evals.bench.capacity_report import Plan, as_json, markdown, memory_fits, sizing_rows
from citewall_evals.bench.kb_growth import KBPoint, SeededEmbedder
from citewall_evals.bench.request_work import RequestWork
from citewall_evals.bench.sizing import (
    demand_rps,
    fit_line,
    members_per_replica,
    replicas_needed,
)

MB = 1024 * 1024


@settings(max_examples=examples(200), deadline=None)
@given(
    intercept=st.floats(-1e4, 1e4),
    slope=st.floats(-1e3, 1e3),
    xs=st.lists(st.integers(0, 2_000_000), min_size=2, max_size=8, unique=True),
)
def test_the_fit_recovers_a_known_line(intercept: float, slope: float, xs: list[int]) -> None:
    fit = fit_line([float(x) for x in xs], [intercept + slope * x for x in xs])
    scale = abs(intercept) + abs(slope) * max(xs) + 1.0
    assert fit.slope == pytest.approx(slope, abs=1e-9 * scale)
    assert fit.intercept == pytest.approx(intercept, abs=1e-7 * scale)
    assert fit.max_residual <= 1e-7 * scale
    assert fit.points == len(xs)


def test_the_fit_is_least_squares_through_noisy_points() -> None:
    fit = fit_line([0.0, 1.0, 2.0], [0.0, 2.0, 1.0])  # slope 0.5, through the mean (1, 1)
    assert (fit.slope, fit.intercept) == (pytest.approx(0.5), pytest.approx(0.5))
    assert fit.max_residual == pytest.approx(1.0)  # at x = 1: 2 against 1
    assert fit.at(10) == pytest.approx(5.5)


@pytest.mark.parametrize(("xs", "ys"), [([1.0], [2.0]), ([3.0, 3.0], [1.0, 2.0]), ([1.0], [])])
def test_the_fit_refuses_what_makes_no_line(xs: list[float], ys: list[float]) -> None:
    with pytest.raises(ValueError):
        fit_line(xs, ys)


def test_sizing_arithmetic_of_the_guide() -> None:
    demand = demand_rps(100, 120)
    assert demand == pytest.approx(0.8333, abs=1e-4)
    assert replicas_needed(demand, 30.0, 2.0) == 1
    assert replicas_needed(demand, 2 * demand, 2.0) == 1  # exactly full: no extra replica
    assert replicas_needed(60.0, 30.0, 2.0) == 4
    assert members_per_replica(30.0, 120, 2.0) == 1800
    assert members_per_replica(2.0, 120, 2.0) == 120


@settings(max_examples=examples(200), deadline=None)
@given(
    members=st.integers(1, 100_000),
    every=st.floats(1, 3600),
    rps=st.floats(0.1, 500),
    headroom=st.floats(1, 5),
)
def test_replicas_cover_the_demand_with_headroom_and_no_more(
    members: int, every: float, rps: float, headroom: float
) -> None:
    demand = demand_rps(members, every)
    n = replicas_needed(demand, rps, headroom)
    assert n >= 1
    assert n * rps / headroom >= demand * (1 - 1e-9)
    assert n == 1 or (n - 1) * rps / headroom < demand * (1 + 1e-9)
    # As many members as one replica serves need one replica.
    per = members_per_replica(rps, every, headroom)
    assert per == 0 or replicas_needed(demand_rps(per, every), rps, headroom) == 1


@pytest.mark.parametrize(
    ("call", "args"),
    [
        (demand_rps, (100, 0)),
        (replicas_needed, (1.0, 0.0, 2.0)),
        (replicas_needed, (1.0, 10.0, 0.5)),
        (members_per_replica, (10.0, 120, 0.9)),
    ],
)
def test_sizing_refuses_meaningless_inputs(call: object, args: tuple[float, ...]) -> None:
    assert callable(call)
    with pytest.raises(ValueError):
        call(*args)


def test_seeded_vectors_are_unit_length_and_the_same_for_the_same_text() -> None:
    embedder = SeededEmbedder(16)
    a = embedder.embed_documents(["one", "two", "one"])
    assert a.shape == (3, 16)
    assert (a[0] == a[2]).all() and not (a[0] == a[1]).all()
    assert all(math.isclose(float((v * v).sum()), 1.0, rel_tol=1e-5) for v in a)
    assert (embedder.embed_query("two") == a[1]).all()


def _load(path: str, rps: float) -> LoadResult:
    return LoadResult(
        path=path,
        reranker="disabled",
        clients=4,
        duration_s=20.0,
        requests=int(rps * 20),
        errors=0,
        error_kinds={},
        requests_per_s=rps,
        p50_ms=100.0,
        p95_ms=150.0,
        mean_ms=110.0,
        hybrid_paths={"rrf_only": int(rps * 20)},
        client_cpu_cores=0.1,
        server_cpu_cores=1.5,
        loadavg_1m_before=1.0,
        loadavg_1m_after=2.0,
    )


def _point(chunks: int) -> KBPoint:
    # 300 MB plus 20 kB a chunk in memory; 10 kB a chunk of Chroma on disk.
    return KBPoint(
        chunks=chunks,
        sentence_units=4 * chunks,
        build_s=1.0,
        rss_kb=300 * 1024 + 20 * chunks,
        anon_rss_kb=200 * 1024 + 15 * chunks,
        peak_rss_kb=310 * 1024 + 20 * chunks,
        disk_bytes={"chroma": 10 * 1024 * chunks, "bm25": 500 * chunks, "sentences": 0},
    )


def report() -> CapacityReport:
    runs = [
        WorkerRun(1, "search", _load("search", 30.0), [350 * 1024], None),
        WorkerRun(2, "search", _load("search", 45.0), [350 * 1024, 351 * 1024], 74 * 1024),
    ]
    work = [RequestWork("POST /api/v1/chat", 20, {"INSERT": 5.0, "SELECT": 5.0}, 5, 2, 1, 1)]
    return CapacityReport(
        command="citewall bench capacity --out benchmarks/results",
        machine="x86_64, Python 3.11",
        cpus=2,
        kb="kb/demo/cards.jsonl",
        clients=4,
        duration_s=20.0,
        loadavg_1m_start=1.0,
        loadavg_1m_end=2.0,
        runs=runs,
        work=work,
        kb_growth=[_point(1000), _point(10_000)],
        started="2026-12-01 03:00:00 UTC",
        wall_s=600.0,
    )


def test_memory_fits_recover_bytes_per_chunk_and_extrapolate() -> None:
    fits = {f["name"]: f for f in memory_fits(report().kb_growth, Plan())}
    rss = fits["process RSS"]
    assert rss["intercept_mb"] == pytest.approx(300.0)
    assert rss["per_chunk_bytes"] == pytest.approx(20 * 1024)
    assert rss["at"][1_000_000] == pytest.approx(300 + 20 * 1024 * 1_000_000 / MB, abs=0.1)
    assert fits["process RSS, private (RssAnon)"]["per_chunk_bytes"] == pytest.approx(15 * 1024)
    assert fits["disk: chroma"]["per_chunk_bytes"] == pytest.approx(10 * 1024)
    assert fits["disk: database"]["per_chunk_bytes"] == 0  # not measured: no bytes
    assert memory_fits([_point(1000)], Plan()) == []


def test_sizing_rows_per_worker_count() -> None:
    rows = sizing_rows(report().runs, Plan(members=100, seconds_between_questions=120))
    assert [(r["workers"], r["replicas"], r["members_per_replica"]) for r in rows] == [
        (1, 1, 1800),
        (2, 1, 2700),
    ]
    assert rows[0]["demand_rps"] == pytest.approx(0.833)


def test_markdown_and_json_carry_the_command_and_every_table() -> None:
    r, plan = report(), Plan()
    md = markdown(r, plan)
    assert r.command in md and "load average" in md
    assert "req/s with 2 workers over 1: search 1.50x." in md
    assert "| 2 | search | 900 | 45.0 |" in md and "350 + 351" in md
    assert "| POST /api/v1/chat | 20 | INSERT 5, SELECT 5 | 5 | 2 | 1 | 1 |" in md
    assert "| process RSS | 300.0 | 20,480 |" in md
    assert "100 / 120 = 0.833 req/s" in md
    assert "| serve --workers 2 | search | 45.0 | 1 | 2,700 |" in md
    data = json.loads(json.dumps(as_json(r, plan)))
    assert data["command"] == r.command
    assert data["sizing"][1]["members_per_replica"] == 2700
    assert data["memory_fits"][0]["at"]["100000"] == pytest.approx(2253.1, abs=0.1)
