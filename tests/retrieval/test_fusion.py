"""RRF properties (hypothesis) and dedupe by parent."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citewall.retrieval.dedupe import best_per_parent
from citewall.retrieval.fusion import rrf

_IDS = st.lists(st.text("abcdefgh", min_size=1, max_size=2), unique=True, max_size=12)
_RANKINGS = st.lists(_IDS, min_size=1, max_size=4)


@given(_RANKINGS, st.integers(min_value=1, max_value=200))
def test_rrf_scores_are_exact_and_sorted(rankings: list[list[str]], k: int) -> None:
    fused = rrf(rankings, k=k)
    expected = {}
    for ranking in rankings:
        for pos, item in enumerate(ranking, start=1):
            expected[item] = expected.get(item, 0.0) + 1.0 / (k + pos)
    assert dict(fused) == pytest.approx(expected)
    assert len(fused) == len(expected)
    scores = [s for _, s in fused]
    assert scores == sorted(scores, reverse=True)


@given(_RANKINGS, st.integers(min_value=1, max_value=100))
def test_rrf_is_deterministic_and_order_of_rankings_does_not_matter(
    rankings: list[list[str]], k: int
) -> None:
    assert rrf(rankings, k=k) == rrf(list(reversed(rankings)), k=k)
    assert [i for i, _ in rrf(rankings, k=k)] == [i for i, _ in rrf(rankings, k=k)]


@given(_IDS, st.integers(min_value=1, max_value=100))
def test_single_ranking_order_is_kept(ranking: list[str], k: int) -> None:
    assert [i for i, _ in rrf([ranking], k=k)] == ranking


@given(_IDS, _IDS, st.floats(min_value=0.01, max_value=10))
def test_weights_scale_and_zero_weight_silences(a: list[str], b: list[str], w: float) -> None:
    scaled = dict(rrf([a, b], k=60, weights=[w, w]))
    plain = dict(rrf([a, b], k=60))
    assert scaled == pytest.approx({i: s * w for i, s in plain.items()})
    only_a = [i for i, s in rrf([a, b], k=60, weights=[1.0, 0.0]) if s > 0]
    assert only_a == a


def test_item_in_both_lists_beats_single_top_and_ties_break_by_rank_then_id() -> None:
    fused = rrf([["x", "both"], ["y", "both"]], k=60)
    assert fused[0][0] == "both"
    assert [i for i, _ in fused[1:]] == ["x", "y"]  # equal scores, equal best rank: by id


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="k must be >= 1"):
        rrf([["a"]], k=0)
    with pytest.raises(ValueError, match="2 weights for 1 rankings"):
        rrf([["a"]], weights=[1, 1])


@given(st.lists(st.tuples(st.sampled_from("abcd"), st.integers(0, 9)), unique=True))
def test_best_per_parent_keeps_first_of_each(items: list[tuple[str, int]]) -> None:
    kept = best_per_parent(items, lambda t: t[0])
    assert [p for p, _ in kept] == list(dict.fromkeys(p for p, _ in items))
    assert all(items.index(t) == min(i for i, x in enumerate(items) if x[0] == t[0]) for t in kept)
