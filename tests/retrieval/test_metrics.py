"""Ranking metrics used by `citewall eval retrieval`."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citewall.retrieval.metrics import ndcg_at_k, recall_at_k, reciprocal_rank


def test_known_values() -> None:
    assert ndcg_at_k(["x", "a"], {"a"}) == pytest.approx(1 / math.log2(3))
    assert ndcg_at_k(["a", "b"], {"a", "b"}) == 1.0
    assert recall_at_k(["a", "x"], {"a", "b"}) == 0.5
    assert reciprocal_rank(["x", "y", "a"], {"a"}) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x"], {"a"}) == 0.0


@given(
    st.lists(st.sampled_from("abcdefghij"), unique=True),
    st.sets(st.sampled_from("abcdef"), min_size=1),
)
def test_metrics_are_in_unit_interval_and_perfect_ranking_scores_one(
    ranked: list[str], gold: set[str]
) -> None:
    for value in (
        ndcg_at_k(ranked, gold),
        recall_at_k(ranked, gold),
        reciprocal_rank(ranked, gold),
    ):
        assert 0.0 <= value <= 1.0 + 1e-12
    perfect = sorted(gold) + [c for c in ranked if c not in gold]
    assert ndcg_at_k(perfect, gold) == pytest.approx(1.0)
    assert reciprocal_rank(perfect, gold) == 1.0
