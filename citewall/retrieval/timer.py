"""Per-stage wall-clock timings of one retrieval, in milliseconds."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


class StageTimer:
    """Times named stages into ``timings_ms`` (rounded to microseconds).

    >>> timer = StageTimer()
    >>> with timer.stage("embed"):
    ...     pass
    >>> sorted(timer.timings_ms)
    ['embed']
    """

    def __init__(self) -> None:
        self.timings_ms: dict[str, float] = {}
        self._started = time.perf_counter()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as ``name`` (also when it raises)."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings_ms[name] = _ms_since(t0)

    def skipped(self, name: str) -> None:
        """Record ``name`` as a stage that did not run (0 ms), so every turn has every key."""
        self.timings_ms[name] = 0.0

    def total(self) -> dict[str, float]:
        """The stage timings plus ``total`` since the timer was made."""
        self.timings_ms["total"] = _ms_since(self._started)
        return self.timings_ms


def _ms_since(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000.0, 3)
