"""The rerank budget: as many passages as fit, skip when too few do, probe every N-th call."""

from __future__ import annotations

import threading

from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.retrieval.rerank_budget import RerankBudget


def test_runs_until_measured_then_skips_and_probes_every_tenth() -> None:
    budget = RerankBudget(budget_ms=100, probe_every=10)
    assert budget.plan(wanted=20, minimum=20) == 20  # nothing known: run
    budget.record(elapsed_ms=400, passages=20)
    decisions = [budget.plan(wanted=20, minimum=20) for _ in range(20)]
    # Nine skips, then a probe of the minimum, then nine more skips and a probe.
    assert decisions == ([0] * 9 + [20]) * 2
    assert budget.estimate(20) == 400.0
    assert budget.overran(400) and not budget.overran(100)


def test_a_slower_machine_reranks_fewer_passages_not_none() -> None:
    budget = RerankBudget(budget_ms=100)
    budget.record(elapsed_ms=200, passages=20)  # 10 ms per passage
    assert budget.plan(wanted=20, minimum=5) == 10
    assert budget.plan(wanted=20, minimum=11) == 0


def test_cheap_measurements_bring_the_estimate_back_under_budget() -> None:
    budget = RerankBudget(budget_ms=100, weight=0.5)
    budget.record(elapsed_ms=400, passages=20)  # 20 ms/passage
    for _ in range(6):
        budget.record(elapsed_ms=20, passages=20)  # 1 ms/passage
    assert budget.plan(wanted=20, minimum=20) == 20


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.floats(0, 1_000), max_size=10),
    st.integers(1, 50),
    st.integers(1, 50),
    st.integers(1, 500),
)
def test_a_plan_is_a_skip_or_fits_between_minimum_and_wanted(
    elapsed: list[float], wanted: int, minimum: int, budget_ms: int
) -> None:
    budget = RerankBudget(budget_ms=budget_ms, probe_every=1_000)  # no probe in this test
    for ms in elapsed:
        budget.record(elapsed_ms=ms, passages=10)
    n = budget.plan(wanted=wanted, minimum=minimum)
    if n:
        assert minimum <= n <= wanted
        assert budget.estimate(n) <= budget_ms + 1e-6
    else:
        assert budget.estimate(min(minimum, wanted)) > budget_ms or minimum > wanted


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.floats(0, 10_000), min_size=1, max_size=30), st.integers(1, 50))
def test_the_estimate_stays_within_what_was_measured(elapsed: list[float], n: int) -> None:
    budget = RerankBudget(budget_ms=50)
    for ms in elapsed:
        budget.record(elapsed_ms=ms, passages=n)
    estimate = budget._ms_per_passage
    assert estimate is not None
    assert min(elapsed) / n - 1e-9 <= estimate <= max(elapsed) / n + 1e-9


def test_concurrent_callers_never_lose_a_probe() -> None:
    budget = RerankBudget(budget_ms=10, probe_every=10)
    budget.record(elapsed_ms=1000, passages=10)
    runs: list[bool] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(250):
            ran = budget.plan(wanted=10, minimum=10) > 0
            with lock:
                runs.append(ran)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Exactly one call in ten probes, however the threads interleave.
    assert len(runs) == 1000 and sum(runs) == 100
