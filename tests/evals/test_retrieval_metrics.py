"""Retrieval metrics: exact values on small cases and properties on random rankings."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citewall_evals.retrieval.metrics import (
    hit_at_k,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
    score_rankings,
)

ids = st.lists(st.sampled_from([f"c{i}" for i in range(15)]), unique=True, max_size=15)


def test_exact_values() -> None:
    assert ndcg_at_k(["a", "b", "c"], {"a"}) == 1.0
    assert ndcg_at_k(["b", "a"], {"a"}) == pytest.approx(1 / math.log2(3))
    assert ndcg_at_k(["b", "a"], {"a", "b"}) == 1.0
    assert recall_at_k(["a", "x"], {"a", "b"}) == 0.5
    assert reciprocal_rank(["x", "y", "a"], {"a"}) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x"], {"a"}) == 0.0
    assert ndcg_at_k([f"x{i}" for i in range(10)] + ["a"], {"a"}, 10) == 0.0


@given(ids, ids)
def test_bounds_and_perfect_ranking(ranking: list[str], gold: list[str]) -> None:
    for value in (
        ndcg_at_k(ranking, gold),
        recall_at_k(ranking, gold),
        reciprocal_rank(ranking, gold),
    ):
        assert 0.0 <= value <= 1.0 + 1e-12
    if gold:
        perfect = gold + [c for c in ranking if c not in gold]
        assert ndcg_at_k(perfect, gold, 15) == pytest.approx(1.0)
        assert recall_at_k(perfect, gold, 15) == 1.0


@given(ids, ids, st.integers(1, 14))
def test_recall_grows_with_k(ranking: list[str], gold: list[str], k: int) -> None:
    assert recall_at_k(ranking, gold, k) <= recall_at_k(ranking, gold, k + 1)


def test_score_rankings_means_and_rejects_mismatch() -> None:
    s = score_rankings("dense", [["a"], ["x"]], [{"a"}, {"b"}])
    assert (s.ndcg_at_10, s.recall_at_10, s.mrr, s.questions) == (0.5, 0.5, 0.5, 2)
    with pytest.raises(ValueError, match="1 rankings for 2"):
        score_rankings("dense", [["a"]], [{"a"}, {"b"}])


@given(ids, ids)
def test_hits_agree_with_the_reciprocal_rank(ranking: list[str], gold: list[str]) -> None:
    one, five = hit_at_k(ranking, gold, 1), hit_at_k(ranking, gold, 5)
    assert one <= five
    assert one == (1.0 if reciprocal_rank(ranking, gold) == 1.0 else 0.0)
    assert five == (1.0 if reciprocal_rank(ranking, gold) >= 0.2 else 0.0)
    scores = score_rankings("p", [ranking], [gold])
    assert (scores.hit_at_1, scores.hit_at_5) == (one, five)
