"""The reranker's time budget: how many passages a rerank can afford, learnt from each run.

A cross-encoder forward pass cannot be interrupted cheaply, so the budget keeps an
exponentially weighted estimate of the cost per passage and sizes each rerank to fit: the fused
top ``wanted`` when it fits, fewer when the machine is slower (as many as the budget divided by
the cost per passage), but never fewer than ``minimum`` (the passages that cover the cards the
retriever returns; below that the path could not honestly be called ``full``). When not even
``minimum`` fits, the rerank is skipped, except every ``probe_every``-th call, which runs
``minimum`` to re-measure. A rerank that still overran has its scores discarded.

Requests run in worker threads, so the estimate and the skip counter sit behind a lock.
"""

from __future__ import annotations

import threading

#: While the estimate says "over budget", still run the reranker this often to re-measure.
PROBE_EVERY = 10
#: Weight of the newest measurement in the per-passage cost estimate.
EWMA_WEIGHT = 0.3


class RerankBudget:
    """Decides how many passages a rerank runs over, and learns from each run.

    >>> budget = RerankBudget(budget_ms=100)
    >>> budget.plan(wanted=20, minimum=5)           # nothing measured yet: all of them
    20
    >>> budget.record(elapsed_ms=100, passages=20)  # 5 ms per passage
    >>> budget.plan(wanted=20, minimum=5)           # 20 fit exactly
    20
    >>> budget.record(elapsed_ms=200, passages=20)  # the machine got slower: ~6.5 ms/passage
    >>> budget.plan(wanted=20, minimum=5)
    15
    >>> budget.plan(wanted=20, minimum=16)          # 16 do not fit: skip
    0
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

    def plan(self, *, wanted: int, minimum: int) -> int:
        """Passages to rerank now: up to ``wanted``, at least ``minimum``; 0 means skip.

        A skipped call counts toward the next probe, which runs ``minimum`` passages.
        """
        minimum = max(1, minimum)
        with self._lock:
            per = self._ms_per_passage
            fits = wanted if not per else min(wanted, int(self.budget_ms // per))
            if fits >= minimum:
                self._skipped = 0
                return fits
            if self._skipped + 1 < self.probe_every:
                self._skipped += 1
                return 0
            self._skipped = 0
            return minimum

    def estimate(self, passages: int) -> float:
        """The expected cost in ms of a rerank of ``passages`` (0 before any measurement)."""
        with self._lock:
            return (self._ms_per_passage or 0.0) * passages

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
