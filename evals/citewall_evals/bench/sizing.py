"""The sizing arithmetic of ``citewall bench capacity``: demand, replicas, a straight-line fit.

Pure functions, so the guide's figures (docs/capacity.md) follow from the measured ones by
rules a test pins: members asking at a steady rate make a demand in requests/s; a replica
serves a measured rate, of which a headroom factor keeps only a share; memory grows with the
KB along a least-squares line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: Rounding slack for ceil/floor of a quotient whose exact value is a whole number
#: (0.8333... * 2 / 1.6666... must give 1, not 2).
_EPS = 1e-9


@dataclass(frozen=True, slots=True)
class LinearFit:
    """``y = intercept + slope * x``, fitted by least squares over ``points`` points."""

    intercept: float
    slope: float
    points: int
    #: Largest absolute residual over the fitted points (0 for two points).
    max_residual: float

    def at(self, x: float) -> float:
        """The line's value at ``x``."""
        return self.intercept + self.slope * x


def fit_line(xs: Sequence[float], ys: Sequence[float]) -> LinearFit:
    """Ordinary least squares of ``ys`` on ``xs``; ``ValueError`` unless there are as many
    ``ys`` as ``xs`` and at least two distinct ``xs``.

    >>> fit = fit_line([1000, 10000], [300.0, 345.0])
    >>> round(fit.intercept, 6), round(fit.slope, 6)
    (295.0, 0.005)
    """
    if len(xs) != len(ys):
        raise ValueError(f"{len(xs)} xs but {len(ys)} ys")
    if len(set(xs)) < 2:
        raise ValueError("a line needs at least two distinct x values")
    n = len(xs)
    mx = math.fsum(xs) / n
    my = math.fsum(ys) / n
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    sxy = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx
    intercept = my - slope * mx
    residual = max(abs(y - (intercept + slope * x)) for x, y in zip(xs, ys, strict=True))
    return LinearFit(intercept, slope, n, residual)


def demand_rps(members: int, seconds_between_questions: float) -> float:
    """Requests/s from ``members`` active members asking one question every
    ``seconds_between_questions`` each (100 members every 120 s: 0.83 req/s).

    >>> round(demand_rps(100, 120), 2)
    0.83
    """
    if seconds_between_questions <= 0:
        raise ValueError("seconds_between_questions must be positive")
    return members / seconds_between_questions


def replicas_needed(demand: float, replica_rps: float, headroom: float) -> int:
    """Replicas that serve ``demand`` req/s when each is planned at ``replica_rps / headroom``
    (its measured throughput, kept to a share for bursts and a replica lost); at least one.

    >>> replicas_needed(0.83, 30.0, 2.0)
    1
    >>> replicas_needed(40.0, 30.0, 2.0)
    3
    """
    if replica_rps <= 0 or headroom < 1:
        raise ValueError("replica_rps must be positive and headroom at least 1")
    return max(1, math.ceil(demand * headroom / replica_rps - _EPS))


def members_per_replica(
    replica_rps: float, seconds_between_questions: float, headroom: float
) -> int:
    """Active members one replica serves at its planned rate (``replica_rps / headroom``).

    >>> members_per_replica(30.0, 120, 2.0)
    1800
    """
    if replica_rps <= 0 or headroom < 1 or seconds_between_questions <= 0:
        raise ValueError("replica_rps and the interval must be positive, headroom at least 1")
    return math.floor(replica_rps * seconds_between_questions / headroom + _EPS)
