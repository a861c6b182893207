"""First sentence from a gold card where a gold card is ranked first, and its control."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from citewall_evals.quality.first_sentence import (
    Opening,
    first_cited_card,
    first_sentence_rate,
    from_lowest_ranked,
)


def test_only_answers_with_a_gold_card_ranked_first_count() -> None:
    openings = [
        Opening("a", ("g", "x", "y"), "g", ("g",)),  # eligible, from gold
        Opening("b", ("g", "x", "y"), "x", ("g",)),  # eligible, from a neighbour
        Opening("c", ("x", "g", "y"), "x", ("g",)),  # gold not ranked first: not counted
        Opening("d", ("g", "x"), None, ("g",)),  # abstained: not counted
    ]
    rate = first_sentence_rate(openings)
    assert (rate.eligible, rate.from_gold, rate.rate) == (2, 1, 0.5)


@given(st.lists(st.integers(2, 5), min_size=1, max_size=20))
def test_the_control_scores_badly_on_answers_that_open_with_the_top_card(sizes: list[int]):
    """Answers that open with their (gold) top card score 1.0; the same answers opened from
    the lowest-ranked card score 0.0."""
    openings = [
        Opening(str(i), tuple(f"c{i}-{r}" for r in range(n)), f"c{i}-0", (f"c{i}-0",))
        for i, n in enumerate(sizes)
    ]
    assert first_sentence_rate(openings).rate == 1.0
    assert first_sentence_rate(from_lowest_ranked(openings)).rate == 0.0


def test_the_first_cited_card_reads_the_first_sentence_markers() -> None:
    sources = [{"n": 1, "card_id": "fees"}, {"n": 3, "card_id": "plans"}]
    assert first_cited_card("Plans cost 9 USD [3]. Fees apply [1].", sources) == "plans"
    assert first_cited_card("Hello there. Fees apply [1].", sources) is None
    assert first_cited_card("", sources) is None
