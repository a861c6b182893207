"""The verbatim cap (whole text and streamed), exposure accounting and the budget rule."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from testenv import examples

from citewall.chat.corpus_protection import (
    Budget,
    CapCounter,
    SentenceGate,
    VerbatimCap,
    apply_cap,
    measure_exposure,
)
from citewall.chat.pipeline import Answer, answer_question, stream_answer
from citewall.citations.verbatim import sentence_key, words
from citewall.generation.protocols import GeneratedReply, Turn
from citewall.retrieval.types import ContextChunk, RetrievedContext
from citewall.runtime import AnswerPolicy

from .chat_context import FixedRetriever

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


class CopyingModel:
    """A model that copies the internal card whole, then adds its own sentence (a stand-in
    for a model-backed generator that ignores the request to paraphrase)."""

    name = "copying-model"

    def __init__(self, text: str) -> None:
        self.text = text

    def generate(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn] = ()
    ) -> GeneratedReply:
        return GeneratedReply(text=self.text, generator=self.name)

    def stream(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn] = ()
    ) -> Iterator[str]:
        for i in range(0, len(self.text), 7):
            yield self.text[i : i + 7]


def test_a_model_that_copies_is_capped_in_the_stream_and_the_stored_answer(
    embedder: Any,
) -> None:
    text = f"{COPY_1} {COPY_2} {OWN}"
    context = RetrievedContext([INTERNAL, EXTERNAL], hybrid_path="rrf_only", top_dense=0.8)
    policy = AnswerPolicy(max_internal_sentences=CAP.max_sentences, span_words=CAP.span_words)
    items = list(
        stream_answer(
            "How are duplicate label charges refunded?",
            retriever=FixedRetriever(context),
            generator=CopyingModel(text),
            embedder=embedder,
            policy=policy,
        )
    )
    final = items[-1]
    assert isinstance(final, Answer)
    streamed = "".join(i for i in items[:-1] if isinstance(i, str))
    assert "Escalate any refund" not in streamed, "a dropped sentence never reaches the stream"
    assert " ".join(streamed.split()) == " ".join(final.content.split())
    assert final.content.startswith(COPY_1[:-4]) and "Escalate" not in final.content
    (exposure,) = final.exposures
    assert exposure.card_id == "pb-refunds" and len(exposure.sentences) == 1
    # Without the cap the copy goes through, and exposure accounting says so.
    free = answer_question(
        "How are duplicate label charges refunded?",
        retriever=FixedRetriever(context),
        generator=CopyingModel(text),
        embedder=embedder,
        policy=AnswerPolicy(span_words=CAP.span_words),
    )
    assert len(free.exposures[0].sentences) == 2


def test_a_restricted_turn_answers_from_external_cards_only(embedder: Any) -> None:
    context = RetrievedContext([INTERNAL, EXTERNAL], hybrid_path="rrf_only", top_dense=0.8)
    answer = answer_question(
        "How long do refunds for voided labels take?",
        retriever=FixedRetriever(context),
        generator=CopyingModel(f"{EXTERNAL.text[:-1]} [1]."),
        embedder=embedder,
        admit=lambda _context: "exposure_budget",
    )
    assert answer.restricted == "exposure_budget" and answer.exposures == ()
    assert [c.id for c in answer.context.chunks] == ["help-refunds"]
    assert {e.card_id for e in answer.events} == {"help-refunds"}
