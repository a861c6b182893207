"""The one percentile rule every benchmark reports with."""

from __future__ import annotations

from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0..1) by linear interpolation between closest ranks (NumPy's
    default rule); NaN for no values.

    >>> percentile([1.0, 2.0, 3.0, 4.0], 0.5)
    2.5
    >>> percentile([10.0], 0.95)
    10.0
    """
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def p50_p95(values: Sequence[float], digits: int = 2) -> dict[str, float]:
    """``{"p50": ..., "p95": ...}`` rounded to ``digits``."""
    return {
        "p50": round(percentile(values, 0.5), digits),
        "p95": round(percentile(values, 0.95), digits),
    }
