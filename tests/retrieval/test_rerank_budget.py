"""The rerank budget: skip while the estimate is over budget, probe every N-th call, learn."""

from __future__ import annotations

import threading

from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.retrieval.rerank_budget import RerankBudget


def test_runs_until_measured_then_skips_and_probes_every_tenth() -> None:
    budget = RerankBudget(budget_ms=100, probe_every=10)
    assert budget.skip_estimate(20) is None  # nothing known: run
    budget.record(elapsed_ms=400, passages=20)
    decisions = [budget.skip_estimate(20) for _ in range(20)]
    # Nine skips, then a probe (None), then nine more skips and a probe.
    assert [d is None for d in decisions] == ([False] * 9 + [True]) * 2
    assert decisions[0] == 400.0
    assert budget.overran(400) and not budget.overran(100)


def test_cheap_measurements_bring_the_estimate_back_under_budget() -> None:
    budget = RerankBudget(budget_ms=100, weight=0.5)
    budget.record(elapsed_ms=400, passages=20)  # 20 ms/passage
    for _ in range(6):
        budget.record(elapsed_ms=20, passages=20)  # 1 ms/passage
    assert budget.skip_estimate(20) is None


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
            ran = budget.skip_estimate(10) is None
            with lock:
                runs.append(ran)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Exactly one call in ten probes, however the threads interleave.
    assert len(runs) == 1000 and sum(runs) == 100
