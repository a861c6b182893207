"""Where a crawl's time went. Pages are fetched and extracted on several threads at once, so
adding up each page's seconds counts overlapping time twice: that sum (thread-seconds, what
the crawl benchmark reports) can exceed the crawl's wall time. What a person reads beside the
total is wall time: the time during which at least one page was being fetched (extracted),
the length of the union of the pages' intervals (``covered_seconds``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

Interval = tuple[float, float]


def covered_seconds(intervals: Iterable[Interval]) -> float:
    """The length of the union of ``(start, end)`` intervals: overlaps count once.

    >>> covered_seconds([(0.0, 2.0), (1.0, 3.0), (5.0, 6.0)])
    4.0
    >>> covered_seconds([])
    0.0
    """
    total = 0.0
    reach: float | None = None
    for start, end in sorted((s, e) for s, e in intervals if e > s):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


@dataclass(slots=True)
class CrawlTimings:
    """A crawl's times. ``fetch_s`` and ``extract_s`` are thread-seconds (summed over pages, so
    with several threads they can exceed ``wall_s``); ``fetch_wall_s`` and ``extract_wall_s``
    are wall time, never more than ``wall_s``."""

    fetch_s: float = 0.0
    extract_s: float = 0.0
    wall_s: float = 0.0
    pages: int = 0
    fetching: list[Interval] = field(default_factory=list, repr=False)
    extracting: list[Interval] = field(default_factory=list, repr=False)

    def fetched(self, start: float, end: float) -> None:
        """A page was fetched from ``start`` to ``end`` (``time.perf_counter`` seconds)."""
        self.fetch_s += end - start
        self.fetching.append((start, end))

    def extracted(self, start: float, end: float) -> None:
        """A page was extracted from ``start`` to ``end``."""
        self.extract_s += end - start
        self.extracting.append((start, end))

    @property
    def fetch_wall_s(self) -> float:
        return covered_seconds(self.fetching)

    @property
    def extract_wall_s(self) -> float:
        return covered_seconds(self.extracting)
