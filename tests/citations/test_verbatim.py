"""Verbatim overlap in words: what the corpus protection counts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from testenv import examples

from citewall.citations.verbatim import (
    MIN_SENTENCE_WORDS,
    card_sentences,
    contains_run,
    longest_span,
    repeated_sentences,
    sentence_key,
    words,
)

VOCAB = st.sampled_from(["refund", "label", "days", "the", "5", "void", "carrier", "a"])
WORDLISTS = st.lists(VOCAB, max_size=30).map(tuple)


def test_markers_punctuation_and_case_do_not_hide_a_copy() -> None:
    card = "Refunds take 5 to 10 business days. Call the carrier first."
    prose = "REFUNDS take 5 to 10 business-days [1]! Something else [2]."
    sentences = card_sentences(card)
    assert repeated_sentences(words(prose), sentences) == [0]
    assert longest_span(words(prose), words(card)) == 7


def test_short_sentences_never_count() -> None:
    sentences = card_sentences("Yes. It is. Refunds take five days.")
    assert [len(s) for s in sentences] == [0, 0, 4]
    assert MIN_SENTENCE_WORDS == 4
    assert repeated_sentences(words("Yes. It is."), sentences) == []


def test_a_word_inside_another_is_not_a_run() -> None:
    assert not contains_run(words("prerefund take"), words("refund take"))
    assert sentence_key(words("Refunds, take!")) == sentence_key(("refunds", "take"))


@hsettings(max_examples=examples(200))
@given(WORDLISTS, WORDLISTS)
def test_longest_span_is_the_longest_shared_run(a: tuple[str, ...], b: tuple[str, ...]) -> None:
    span = longest_span(a, b)
    assert span == longest_span(b, a)
    assert span <= min(len(a), len(b))
    # Brute force: the longest run of a that occurs in b.
    best = max(
        (j - i for i in range(len(a)) for j in range(i + 1, len(a) + 1) if contains_run(b, a[i:j])),
        default=0,
    )
    assert span == best


@hsettings(max_examples=examples(100))
@given(WORDLISTS, WORDLISTS, WORDLISTS)
def test_a_sentence_inside_the_prose_is_repeated(
    before: tuple[str, ...], sentence: tuple[str, ...], after: tuple[str, ...]
) -> None:
    if not sentence:
        return
    assert contains_run(before + sentence + after, sentence)
    assert longest_span(before + sentence + after, sentence) == len(sentence)
