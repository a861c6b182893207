"""The calibration's probe questions: made from the KB, deterministic, bounded."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.retrieval.probes import (
    SUBSTITUTES,
    CardText,
    document_frequencies,
    near_miss,
    off_domain_questions,
    probes_for,
    pseudo_questions,
    sample_cards,
    vocabulary,
)
from citewall.text.terms import content_terms

CARDS = [
    CardText(
        "ship", "Where we ship", "We ship to the United States and Canada.\n\n## Rates\nFlat."
    ),
    CardText("returns", "Returns", "Return any item within 30 days of delivery for a refund."),
    CardText("hours", "Opening hours", "Our support team answers Monday to Friday, 9 to 5."),
    CardText("pay", "Paying", "We accept Visa, Mastercard and American Express cards."),
]


def test_the_shipped_off_domain_set_is_about_a_hundred_distinct_questions() -> None:
    questions = off_domain_questions()
    assert 90 <= len(questions) <= 150
    assert len(set(questions)) == len(questions)
    assert all(q.endswith(("?", ".")) for q in questions)


def test_pseudo_questions_come_from_the_title_headings_and_first_sentence() -> None:
    questions = pseudo_questions(CARDS[0])
    assert any("where we ship" in q.lower() for q in questions)
    assert "How do I rates?" in questions
    assert "Is it true that we ship to the United States and Canada?" in questions
    assert all(q.endswith("?") for q in questions)


def test_a_near_miss_swaps_a_key_term_for_one_the_kb_never_uses() -> None:
    df, n = document_frequencies(CARDS)
    miss = near_miss("Do you ship to Canada?", vocabulary(df, n), frozenset(df))
    assert miss is not None and "Canada" not in miss
    swapped = content_terms(miss) - content_terms("Do you ship to Canada?")
    assert swapped and not swapped & set(df)


@settings(max_examples=examples(100))
@given(st.lists(st.sampled_from(SUBSTITUTES), max_size=len(SUBSTITUTES)))
def test_near_misses_never_use_a_term_of_the_kb(used: list[str]) -> None:
    kb_terms = frozenset(t for s in used for t in content_terms(s)) | {"ship", "canada"}
    miss = near_miss("Do you ship to Canada?", vocabulary(document_frequencies([])[0], 0), kb_terms)
    if miss is not None:
        assert not (content_terms(miss) - content_terms("Do you ship to")) & kb_terms


def test_the_sample_is_bounded_and_the_same_on_every_run() -> None:
    cards = [CardText(f"c{i}", f"Card {i}", "Some words here for a body.") for i in range(50)]
    first = sample_cards(cards, 10)
    assert len(first) == 10
    assert first == sample_cards(list(reversed(cards)), 10)
    assert sample_cards(cards[:5], 10) == sorted(cards[:5], key=lambda c: c.card_id)


def test_every_probe_kind_is_there() -> None:
    df, n = document_frequencies(CARDS)
    probes = probes_for(CARDS, vocabulary(df, n), frozenset(df))
    kinds = {p.kind for p in probes}
    assert kinds == {"answerable", "off_domain", "near_miss"}
    assert probes == probes_for(CARDS, vocabulary(df, n), frozenset(df))
