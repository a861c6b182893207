"""The staff-only post-check in the pipeline, with a scripted OpenAI-compatible model: a
sentence meant for staff is removed from the answer, streamed or not, and is never among the
deltas, however the stream is split; an answer with nothing left is the honest "not found"; no
vocabulary, no check."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.boundary.staff_only import StaffVocabulary
from citewall.chat.corpus_protection import SentenceGate, apply_cap
from citewall.chat.pipeline import NOTHING_FOUND, Answer, stream_answer
from citewall.chat.staff_check import REMOVED_KEY, StaffFilter
from citewall.generation.openai_compat import OpenAICompatGenerator
from citewall.runtime import AnswerPolicy
from citewall_evals.llm_server import Reply, ScriptedOpenAIServer

from .chat_context import FixedRetriever, make_context

SAFE = "The refund goes back to your Parcelry balance within 5 to 10 business days [1]."
STAFF = "Escalate to Tier 2 with the order number and log it in Helm [2]."
CHECKED = AnswerPolicy(staff_vocabulary=StaffVocabulary(internal=frozenset({"Helm"})))


def run(
    llm: ScriptedOpenAIServer, embedder: Any, reply: str, policy: AnswerPolicy, stream: bool
) -> tuple[str, Answer]:
    """The deltas the pipeline yielded (joined) and its final answer."""
    # Small chunks: the staff sentence arrives in pieces, as a model streams it.
    llm.enqueue(Reply(reply, chunks=[reply[i : i + 7] for i in range(0, len(reply), 7)]))
    generator = OpenAICompatGenerator(base_url=llm.base_url, model="fake", timeout_s=5, retries=0)
    items = list(
        stream_answer(
            "How long do void refunds take?",
            retriever=FixedRetriever(make_context()),  # type: ignore[arg-type]
            generator=generator,
            embedder=embedder,
            policy=policy,
            streaming=stream,
        )
    )
    final = items[-1]
    assert isinstance(final, Answer)
    return "".join(i for i in items if isinstance(i, str)), final


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_staff_only_sentence_is_removed_before_the_member_sees_it(
    llm: ScriptedOpenAIServer, embedder: Any, stream: bool
) -> None:
    shown, answer = run(llm, embedder, f"{SAFE} {STAFF}", CHECKED, stream)
    assert answer.content == SAFE
    assert "Tier 2" not in shown and "Helm" not in shown
    assert answer.answer_status == "answered"
    assert [c.card_id for c in answer.citations] == ["help-void"]
    assert answer.timings_ms[REMOVED_KEY] == 1.0


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_nothing_left_is_the_honest_not_found(
    llm: ScriptedOpenAIServer, embedder: Any, stream: bool
) -> None:
    shown, answer = run(llm, embedder, STAFF, CHECKED, stream)
    assert answer.content == NOTHING_FOUND and answer.answer_status == "not_found"
    assert "Tier 2" not in shown
    assert answer.citations == () and answer.sources == ()


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_without_a_vocabulary_there_is_no_check(
    llm: ScriptedOpenAIServer, embedder: Any, stream: bool
) -> None:
    _, answer = run(llm, embedder, f"{SAFE} {STAFF}", AnswerPolicy(), stream)
    assert answer.content == f"{SAFE} {STAFF}"
    assert REMOVED_KEY not in answer.timings_ms


sentences = st.sampled_from(
    [
        SAFE,
        STAFF,
        "Reissues are free once per return.",
        "Tag the ticket with GW-BUG [2].",
        "A scanned label cannot be voided [1].",
        "Never tell the merchant which signal fired.",
    ]
)


@settings(max_examples=examples(200))
@given(parts=st.lists(sentences, min_size=1, max_size=5), cuts=st.lists(st.integers(0, 400)))
def test_a_stream_shows_no_part_of_a_staff_only_sentence_however_it_is_split(
    parts: list[str], cuts: list[int]
) -> None:
    text = " ".join(parts)
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    staff = StaffFilter(CHECKED.staff_vocabulary or StaffVocabulary())
    gate = SentenceGate(staff.keep)
    shown = "".join(gate.feed(text[a:b]) for a, b in itertools.pairwise(bounds)) + gate.finish()
    whole = apply_cap(text, StaffFilter(CHECKED.staff_vocabulary or StaffVocabulary()).keep)
    assert " ".join(shown.split()) == " ".join(whole.split())
    for flagged in (STAFF, "Tag the ticket with GW-BUG [2].", "Never tell the merchant"):
        assert flagged not in shown


def test_a_sentence_of_a_playbook_reply_is_kept_word_for_word_and_only_so() -> None:
    """The reply's author wrote it for the member: a code in it (RKV-22, the service the member
    books) is told; the same code elsewhere, or the reply reworded, is judged."""
    vocabulary = StaffVocabulary(internal=frozenset({"Helm"}))
    reply = "Book the tail-lift service RKV-22 for pallets over 500 kg. We confirm within a day."
    staff = StaffFilter(vocabulary, [reply])
    assert staff.keep("Book the tail-lift service RKV-22 for pallets over 500 kg [1].")
    assert not staff.keep("Tag the booking RKV-22 in Helm [1].")
    assert not staff.keep("Book service RKV-22 in Helm for pallets [1].")
    assert not StaffFilter(vocabulary).keep("Tag the booking RKV-22 in Helm [1].")
    assert [v.staff_only for v in staff.removed] == [True, True]
