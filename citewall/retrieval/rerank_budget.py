"""The reranker's time budget: a thread-safe moving estimate of what a rerank will cost.

A cross-encoder forward pass cannot be interrupted cheaply, so a rerank is timed and, when it
overran the budget, its scores are discarded (the path is then ``rrf_only``). To avoid paying
for work that will be thrown away on an overloaded machine, the budget keeps an exponentially
weighted estimate of the cost per passage; while the estimate for a call exceeds the budget the
call is skipped, except every ``probe_every``-th one, which runs to re-measure.

Requests run in worker threads, so the estimate and the skip counter sit behind a lock.
"""

from __future__ import annotations

import threading

#: While the estimate says "over budget", still run the reranker this often to re-measure.
PROBE_EVERY = 10
#: Weight of the newest measurement in the per-passage cost estimate.
EWMA_WEIGHT = 0.3


class RerankBudget:
    """Decides whether a rerank of ``n`` passages is worth running, and learns from each run.

    >>> budget = RerankBudget(budget_ms=100)
    >>> budget.skip_estimate(20) is None          # nothing measured yet: run it
    True
    >>> budget.record(elapsed_ms=400, passages=20)  # 20 ms per passage
    >>> budget.skip_estimate(20)                  # 400 ms expected > 100 ms: skip
    400.0
    """

    def __init__(
        self, budget_ms: float, *, probe_every: int = PROBE_EVERY, weight: float = EWMA_WEIGHT
    ) -> None:
        self.budget_ms = budget_ms
        self.probe_every = probe_every
        self.weight = weight
        self._ms_per_passage: float | None = None
        self._skipped = 0
        self._lock = threading.Lock()

    def skip_estimate(self, passages: int) -> float | None:
        """The estimated cost in ms when this call should be skipped, else None (run it).

        A skipped call counts toward the next probe.
        """
        with self._lock:
            estimate = (self._ms_per_passage or 0.0) * passages
            if estimate > self.budget_ms and self._skipped + 1 < self.probe_every:
                self._skipped += 1
                return estimate
            self._skipped = 0
            return None

    def record(self, *, elapsed_ms: float, passages: int) -> None:
        """Fold one measured rerank into the per-passage estimate."""
        per = elapsed_ms / max(1, passages)
        with self._lock:
            prev = self._ms_per_passage
            self._ms_per_passage = (
                per if prev is None else (1 - self.weight) * prev + self.weight * per
            )

    def overran(self, elapsed_ms: float) -> bool:
        """Whether a rerank that took ``elapsed_ms`` must have its scores discarded."""
        return elapsed_ms > self.budget_ms
