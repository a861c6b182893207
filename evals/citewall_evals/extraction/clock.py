"""A clock the benchmark moves by hand: days of attack or honest use in seconds of wall time.

The app reads it as ``Runtime.clock`` (stored timestamps, the exposure budget's window, the rate
limit); the runner advances it between questions and by a 429's ``Retry-After``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

#: Where every simulated run starts (a Monday morning, UTC): fixed, so runs repeat exactly.
EPOCH = datetime(2030, 1, 7, 9, 0, tzinfo=UTC)


class FakeClock:
    """``clock()`` is the simulated now; ``advance`` moves it forward only.

    >>> clock = FakeClock()
    >>> clock.advance(90)
    >>> clock.elapsed_s, clock().minute
    (90.0, 1)
    """

    def __init__(self, start: datetime = EPOCH) -> None:
        if start.tzinfo is None:
            raise ValueError("the clock's start must be timezone-aware (UTC)")
        self._start = start
        self._now = start

    def __call__(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"a clock cannot go back ({seconds} s)")
        self._now += timedelta(seconds=seconds)

    @property
    def elapsed_s(self) -> float:
        return (self._now - self._start).total_seconds()
