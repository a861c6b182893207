"""The knowledge-gaps classification: coverage per card and the two lists."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from citewall.retrieval.covered import VERDICT, GapRule, TurnOutcome, coverage
from citewall.text.terms import content_terms

WORDS = st.sampled_from(["refund", "annual", "plan", "canada", "ship", "phone", "saturday"])
TEXTS = st.lists(WORDS, max_size=5).map(" ".join)
OUTCOMES = st.builds(
    TurnOutcome,
    answer_status=st.sampled_from(["answered", "not_found"]),
    support=st.none() | st.floats(-1.0, 1.0),
    coverage=st.floats(0.0, 1.0),
    rating=st.sampled_from([None, "up", "down"]),
)
RULES = st.builds(GapRule, min_coverage=st.floats(0.0, 1.0), low_support=st.floats(-1.0, 1.0))


def terms(texts: list[str]) -> list[set[str]]:
    return [content_terms(t) for t in texts]


@given(TEXTS, st.lists(TEXTS, max_size=4), TEXTS)
def test_coverage_is_a_share_and_another_card_never_lowers_it(
    question: str, cards: list[str], extra: str
) -> None:
    before = coverage(question, terms(cards))
    assert 0.0 <= before <= 1.0
    assert coverage(question, terms([*cards, extra])) >= before


def test_coverage_is_per_card_not_pooled() -> None:
    """Terms spread over two unrelated cards do not make either cover the question."""
    cards = terms(["ship to canada", "phone on saturday"])
    assert coverage("ship to canada on saturday", cards) == 2 / 3


@given(RULES, OUTCOMES)
def test_not_found_is_always_a_gap_and_the_verdict_follows_the_reason(
    rule: GapRule, turn: TurnOutcome
) -> None:
    reason = rule.reason(turn)
    if turn.answer_status == "not_found":
        assert reason == "not_found"
    assert rule.classify(turn) == (None if reason is None else VERDICT[reason])


@given(RULES, OUTCOMES)
def test_an_answer_is_a_gap_only_when_both_signals_are_low(
    rule: GapRule, turn: TurnOutcome
) -> None:
    """Coverage alone listed covered questions as gaps; support alone did too (the old rule)."""
    if turn.answer_status == "answered" and rule.classify(turn) == "gap":
        assert turn.coverage < rule.min_coverage
        assert turn.support is not None and turn.support < rule.low_support


@given(RULES, OUTCOMES)
def test_a_rating_never_moves_a_question_between_gap_and_covered(
    rule: GapRule, turn: TurnOutcome
) -> None:
    """Ratings say whether a covered answer went wrong; coverage alone decides a gap."""
    rated = [
        rule.classify(TurnOutcome(turn.answer_status, turn.support, turn.coverage, r))
        for r in (None, "up", "down")
    ]
    assert len({v == "gap" for v in rated}) == 1
    if rated[0] != "gap":
        assert rated[2] == "answered_badly"
