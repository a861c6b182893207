"""The verbatim cap (whole text and streamed), exposure accounting and the budget rule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from testenv import examples

from citewall.chat.exposure import (
    Budget,
    CapCounter,
    SentenceGate,
    VerbatimCap,
    apply_cap,
    measure_exposure,
)
from citewall.citations.verbatim import sentence_key, words
from citewall.retrieval.types import ContextChunk

INTERNAL = ContextChunk(
    id="pb-refunds",
    text=(
        "Agents refund duplicate label charges from the billing console within two days. "
        "Escalate any refund above two hundred dollars to the finance lead on duty. "
        "Never promise a refund date before the carrier confirms the void. "
        "Short one."
    ),
)
EXTERNAL = ContextChunk(
    id="help-refunds",
    text="Refunds for voided labels go back to your balance in five to ten business days.",
    source="https://help.example/refunds",
)
CAP = VerbatimCap(max_sentences=1, span_words=6)
COPY_1 = "Agents refund duplicate label charges from the billing console within two days [1]."
COPY_2 = "Escalate any refund above two hundred dollars to the finance lead on duty [1]."
OWN = "A refund usually takes a few days [2]."


def test_the_cap_keeps_the_first_copies_and_every_sentence_of_its_own() -> None:
    text = f"{COPY_1} {OWN}\n{COPY_2}"
    counter = CapCounter(CAP, [INTERNAL, EXTERNAL])
    assert apply_cap(text, counter.keep) == f"{COPY_1} {OWN}"
    assert (counter.copied, counter.dropped) == (1, 1)


def test_external_text_is_never_capped() -> None:
    text = f"{EXTERNAL.text} {EXTERNAL.text}"
    assert apply_cap(text, CapCounter(CAP, [EXTERNAL]).keep) == text


def test_a_copy_shorter_than_the_span_is_not_a_copy() -> None:
    counter = CapCounter(VerbatimCap(max_sentences=0, span_words=6), [INTERNAL])
    assert counter.keep("Escalate any refund above it.")
    assert not counter.keep(COPY_2)


SENTENCES = st.sampled_from(
    [
        COPY_1,
        COPY_2,
        OWN,
        "Never promise a refund date before the carrier confirms the void [1].",
        "Thanks!",
    ]
)


@hsettings(max_examples=examples(150))
@given(
    st.lists(SENTENCES, min_size=1, max_size=6),
    st.lists(st.sampled_from([" ", "\n"]), min_size=6, max_size=6),
    st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=40),
)
def test_a_stream_through_the_gate_shows_what_the_whole_text_keeps(
    sentences: list[str], gaps: list[str], cuts: list[int]
) -> None:
    """Whatever the deltas' sizes, the gate releases the capped text and nothing it drops."""
    text = "".join(s + gap for s, gap in zip(sentences, gaps, strict=False)).rstrip()
    whole = apply_cap(text, CapCounter(CAP, [INTERNAL]).keep)
    gate = SentenceGate(CapCounter(CAP, [INTERNAL]).keep)
    released, pos, i = [], 0, 0
    while pos < len(text):
        step = cuts[i % len(cuts)]
        released.append(gate.feed(text[pos : pos + step]))
        pos, i = pos + step, i + 1
    released.append(gate.finish())
    assert " ".join("".join(released).split()) == " ".join(whole.split())


def test_exposure_counts_cited_and_copied_internal_cards_only() -> None:
    prose = f"{COPY_1} {OWN}"
    records = measure_exposure(prose, [INTERNAL, EXTERNAL], {"pb-refunds", "help-refunds"}, 6)
    assert len(records) == 1
    (record,) = records
    assert record.card_id == "pb-refunds" and record.cited
    assert record.sentences == (sentence_key(words(COPY_1)),)
    assert record.card_sentences == 3 and record.longest_span == 12
    # Copied without a citation still counts; neither cited nor copied does not.
    assert measure_exposure(COPY_2, [INTERNAL], set(), 6)[0].cited is False
    assert measure_exposure(OWN, [INTERNAL], set(), 6) == []


def test_the_budget_is_spent_at_its_count_within_its_window() -> None:
    budget = Budget(cards=3, window=timedelta(hours=24))
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    assert budget.since(now) == now - timedelta(hours=24)
    assert (budget.spent(2), budget.spent(3), budget.spent(4)) == (False, True, True)
