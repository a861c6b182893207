"""The staff-only sentence detector: each signal, the per-KB vocabulary, and its invariants
(adding staff-only text never makes a sentence member-safe; the vocabulary never holds a word a
public card uses)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.boundary.staff_only import (
    MEMBER_SAFE,
    StaffVocabulary,
    judge,
    staff_vocabulary,
)

VOCABULARY = staff_vocabulary(
    [
        "Log it in Kestrel > Accounts before you reply.",
        "Check the refund in Kestrel and tag it REFUND-LATE.",
    ],
    ["Open Accounts to see your refunds.", "Files are encoded in UTF-8."],
)

#: Sentences worded unlike the demo KB's, one or more per signal.
STAFF_ONLY = {
    "Tag the account FRAUD-LOSS and close the conversation.": "code",
    "Reply with macro ACC-14.": "code",
    "Look the payment up in Kestrel first.": "internal_term",
    "Escalate to Tier 2 with the invoice number.": "handoff",
    "Route those through our integrations team lead.": "handoff",
    "If the outage lasts over an hour, page the on-call engineer.": "handoff",
    "Never tell the account holder why the review started.": "instruction",
    "Ask the customer for a photo of the damaged box.": "instruction",
    "Approve if the storefront has real reviews.": "instruction",
    "Log the case in the handover notes for the next shift.": "instruction",
    "Ask for ID only when the score is above 70.": "instruction",
    "Accounts with two or more signals are reviewed by hand.": "threshold",
}
MEMBER_SAFE_SENTENCES = [
    "Late parcels get a goodwill credit.",
    "Refunds reach your balance within 5 to 10 business days.",
    "Open Accounts to see your refunds.",
    "Exports are CSV files encoded in UTF-8 with a header row.",
    "You can void a label you did not use from Shipping activity.",
    "Our support team answers within two business days.",
    "We never ask you to confirm your password by email.",
]


def test_the_vocabulary_is_what_only_internal_cards_use() -> None:
    assert VOCABULARY.internal == frozenset({"Kestrel"})
    assert VOCABULARY.public_codes == frozenset({"UTF-8"})


def test_a_name_in_one_internal_card_only_is_not_vocabulary() -> None:
    once = staff_vocabulary(["Insurance is underwritten by Aldermoor."], [])
    assert once.internal == frozenset()


def test_calendar_words_are_never_vocabulary() -> None:
    v = staff_vocabulary(["Since the June rollout it works.", "After the June fix."], [])
    assert v.internal == frozenset()


@pytest.mark.parametrize("sentence", sorted(STAFF_ONLY))
def test_staff_only_sentences_are_flagged_with_their_reason(sentence: str) -> None:
    verdict = judge(sentence, VOCABULARY)
    assert verdict.staff_only, sentence
    assert verdict.reason == STAFF_ONLY[sentence]
    assert verdict.matched and verdict.matched in sentence


@pytest.mark.parametrize("sentence", MEMBER_SAFE_SENTENCES)
def test_member_safe_sentences_pass(sentence: str) -> None:
    assert judge(sentence, VOCABULARY) == MEMBER_SAFE


def test_a_code_a_public_card_uses_is_not_staff_vocabulary() -> None:
    assert not judge("Save the file as UTF-8.", VOCABULARY).staff_only
    assert judge("Save the file as UTF-8.", StaffVocabulary()).reason == "code"


staff_phrases = st.sampled_from(sorted(STAFF_ONLY))


@settings(max_examples=examples(300))
@given(text=st.text(max_size=200), phrase=staff_phrases)
def test_adding_a_staff_only_phrase_never_makes_a_sentence_member_safe(
    text: str, phrase: str
) -> None:
    assert judge(f"{text} {phrase}", VOCABULARY).staff_only
    assert judge(f"{phrase} {text}", VOCABULARY).staff_only


@settings(max_examples=examples(300))
@given(text=st.text(max_size=300))
def test_a_verdict_names_what_it_matched(text: str) -> None:
    verdict = judge(text, VOCABULARY)
    assert verdict.staff_only == (verdict.reason is not None)
    assert (verdict.matched is not None) == verdict.staff_only
    if verdict.matched is not None:
        assert verdict.matched in text


words = st.text(alphabet="abcdefgHKLMNOPQR-12 .", min_size=1, max_size=40)


@settings(max_examples=examples(200))
@given(internal=st.lists(words, max_size=6), public=st.lists(words, max_size=6))
def test_the_vocabulary_never_holds_a_word_a_public_card_uses(
    internal: list[str], public: list[str]
) -> None:
    vocabulary = staff_vocabulary(internal, public)
    public_words = {w.lower() for text in public for w in text.replace(".", " ").split()}
    assert not {w.lower() for w in vocabulary.internal} & public_words
    # and a public card's own sentences are never flagged by the vocabulary
    for text in public:
        verdict = judge(text, vocabulary)
        assert verdict.reason != "internal_term"
