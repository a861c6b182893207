"""retrieved_score: round(100 * sigmoid(logit)), integer-valued, in [0, 100] (locked choice A)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from citewall.citations.scores import retrieved_score


def test_known_values() -> None:
    assert retrieved_score(0.0) == 50.0
    assert retrieved_score(2.0) == 88.0  # 100 * 0.8808
    assert retrieved_score(-2.0) == 12.0
    assert retrieved_score(float("inf")) == 100.0
    assert retrieved_score(float("-inf")) == 0.0
    assert retrieved_score(float("nan")) is None
    assert retrieved_score(1e308) == 100.0
    assert retrieved_score(-1e308) == 0.0


@given(st.floats(allow_nan=False))
def test_score_is_an_integer_valued_float_in_range(logit: float) -> None:
    score = retrieved_score(logit)
    assert isinstance(score, float)
    assert 0.0 <= score <= 100.0
    assert score == math.floor(score)


@given(st.floats(min_value=-30, max_value=30), st.floats(min_value=-30, max_value=30))
def test_monotonic(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    assert retrieved_score(lo) <= retrieved_score(hi)  # type: ignore[operator]


@given(st.floats(min_value=-700, max_value=700))
def test_matches_the_textbook_formula(logit: float) -> None:
    expected = float(round(100 / (1 + math.exp(-logit))))
    assert retrieved_score(logit) == expected
