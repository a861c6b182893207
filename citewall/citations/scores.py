"""Score normalisation for the ``retrieved_score`` citation field (locked choice A).

Only the cross-encoder's raw logit is normalised, and only once: ``round(100 * sigmoid(logit))``
as an integer-valued float in [0, 100]. RRF and cosine scores never go through here (choice B).
"""

from __future__ import annotations

import math


def sigmoid(x: float) -> float:
    """Numerically stable logistic function (no overflow for large |x|)."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def retrieved_score(logit: float) -> float | None:
    """The 0-100 relevance shown for a citation, from a raw reranker logit.

    None for NaN or a value that is not a real number; +inf -> 100.0, -inf -> 0.0.

    >>> retrieved_score(0.0), retrieved_score(2.0), retrieved_score(float("-inf"))
    (50.0, 88.0, 0.0)
    """
    if isinstance(logit, bool):
        return None
    try:
        x = float(logit)
    except (TypeError, ValueError, OverflowError):
        return None
    if math.isnan(x):
        return None
    return float(round(100.0 * sigmoid(x)))
