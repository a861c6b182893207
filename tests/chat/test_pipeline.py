"""answer_question / stream_answer over a fixed context with the real extractive generator."""

from __future__ import annotations

from typing import Any

import pytest

from citewall.chat.pipeline import (
    NOTHING_FOUND,
    Answer,
    Generating,
    answer_question,
    stream_answer,
)
from citewall.generation.extractive import ExtractiveGenerator
from citewall.kb.audiences import CardFilter, Viewer
from citewall.retrieval.types import RetrievalRecord, RetrievedContext
from citewall.runtime import AnswerPolicy
from citewall.storage.sources import StoredSource
from citewall.text.question import clean_question

from .chat_context import CANARY_M, CANARY_T, KB_URL, FixedRetriever, make_context


def ask(embedder: Any, question: str, context: RetrievedContext) -> Answer:
    return answer_question(
        question,
        retriever=FixedRetriever(context),
        generator=ExtractiveGenerator(embedder),
        embedder=embedder,
    )


VOID_QUESTION = "How long until a voided label refund arrives?"


def test_full_answer_shape(embedder: Any) -> None:
    """The extractive generator is deterministic: the exact answer, citations, sources and
    events for this context are pinned."""
    context = make_context("full")
    answer = ask(embedder, VOID_QUESTION, context)
    assert answer.hybrid_path == "full" and answer.generator_name == "extractive"
    assert answer.dropped_markers == 0 and not answer.attributed
    assert answer.content == (
        "You can void a label you did not use [1]. The refund goes back to your Parcelry "
        "balance within 5 to 10 business days [1]. A scanned label cannot be voided [1]."
    )
    # One citation per card: span is the first sentence citing it; URL and license from the
    # verified metadata; score = round(100 * sigmoid(2.0)).
    assert [c.model_dump() for c in answer.citations] == [
        {
            "card_id": "help-void",
            "span": "You can void a label you did not use [1].",
            "source_url": KB_URL,
            "source_license": "CC-BY-SA-4.0",
            "retrieved_score": 88.0,
        }
    ]
    # Sources are FULL stored sources, one per cited card (all metadata kept).
    chunk = context.chunks[0]
    assert [s.model_dump(mode="json") for s in answer.sources] == [
        {
            "n": 1,
            "card_id": "help-void",
            "title": chunk.title,
            "text": chunk.text,
            "span": "You can void a label you did not use [1].",
            "source_url": KB_URL,
            "source_license": "CC-BY-SA-4.0",
            "retrieved_score": 88.0,
            "attributed": False,
            "metadata": chunk.metadata,
        }
    ]
    StoredSource.model_validate(answer.sources[0])
    # One event per retrieved card, in rank order, with every stage's rank and score.
    assert [(e.card_id, e.final_rank, e.cited, e.is_external) for e in answer.events] == [
        ("help-void", 1, True, True),
        ("pb-void-overdue", 2, False, False),
        ("help-pickup", 3, False, True),
    ]
    assert answer.events[2] == RetrievalRecord(
        card_id="help-pickup",
        final_rank=3,
        dense_rank=5,
        dense_score=0.2,
        bm25_rank=None,
        bm25_score=None,
        rrf_rank=3,
        rrf_score=0.015,
        rerank_rank=3,
        rerank_logit=-4.0,
        hybrid_path="full",
        cited=False,
        is_external=True,
    )
    assert answer.timings_ms["total"] >= answer.timings_ms["generate"] > 0


def test_an_internal_card_is_cited_without_url_or_license(embedder: Any) -> None:
    # The playbook ranks first here, so the answer comes from it (an answer quotes the card
    # that answers, not its neighbours).
    context = make_context()
    context.chunks = [context.chunks[1], context.chunks[0], *context.chunks[2:]]
    reply = (
        "If a void refund is still pending after 15 business days, we open a dispute with "
        "the carrier for you."
    )
    context.chunks[0].reply = reply
    answer = ask(
        embedder, "What if a void refund is still pending after 15 business days?", context
    )
    # Quoted from the playbook's reply only: its staff notes never reach the prose.
    assert answer.content == reply.removesuffix(".") + " [1]."
    assert "Disputes tab" not in answer.content and "merchant" not in answer.content
    assert [c.model_dump(exclude_none=True) for c in answer.citations] == [
        {
            "card_id": "pb-void-overdue",
            "span": answer.content,
            "retrieved_score": 38.0,  # round(100 * sigmoid(-0.5))
        },
    ]
    # The stored source of the internal card keeps its internal metadata (canaries included).
    internal = answer.sources[0]
    assert (internal.n, internal.card_id, internal.source_url) == (
        1,
        "pb-void-overdue",
        None,
    )
    assert internal.metadata["owner_note"] == CANARY_M and CANARY_T in internal.title
    assert CANARY_T not in answer.content and CANARY_M not in answer.content
    assert [e.cited for e in answer.events] == [True, False, False]


def test_rrf_only_has_no_scores(embedder: Any) -> None:
    answer = ask(embedder, VOID_QUESTION, make_context("rrf_only"))
    assert answer.citations
    assert all(c.retrieved_score is None for c in answer.citations)
    assert all(s.retrieved_score is None for s in answer.sources)


def test_nothing_retrieved_is_answered_honestly(embedder: Any) -> None:
    answer = ask(embedder, "What is the capital of Mars?", RetrievedContext())
    assert answer.content == NOTHING_FOUND
    assert answer.citations == () and answer.sources == () and answer.events == ()
    assert answer.hybrid_path is None


def test_stream_yields_deltas_then_the_same_answer(embedder: Any) -> None:
    context = make_context("full")
    items = list(
        stream_answer(
            VOID_QUESTION,
            retriever=FixedRetriever(context),
            generator=ExtractiveGenerator(embedder),
            embedder=embedder,
        )
    )
    # One ``Generating`` event, before the model's first delta, says what it writes from.
    start, *deltas, final = items
    assert isinstance(start, Generating) and start.context == context
    assert all(isinstance(d, str) for d in deltas) and isinstance(final, Answer)
    assert "".join(deltas) == final.content  # type: ignore[arg-type]
    batch = ask(embedder, VOID_QUESTION, context)
    assert batch.content == final.content and batch.citations == final.citations


def test_the_pipeline_retrieves_the_cleaned_question_as_it_is(embedder: Any) -> None:
    # e.g. `citewall ask` with undecodable bytes in argv (a lone surrogate), or invisible
    # characters pasted into a question: cleaned where it enters (``clean_question``), then
    # carried as it is by both paths (tests/text/test_question.py: the empty one is refused).
    retriever = FixedRetriever(make_context())
    kwargs: Any = {
        "retriever": retriever,
        "generator": ExtractiveGenerator(embedder),
        "embedder": embedder,
    }
    question = clean_question("void\udcff a \u202elabel\u200b?\x00")
    answer_question(question, **kwargs)
    list(stream_answer(question, **kwargs))
    assert retriever.questions == ["void\ufffd a label?"] * 2


SPANISH = "¿Cuánto tarda el reembolso de una etiqueta anulada?"


@pytest.mark.parametrize("streaming", [False, True])
def test_a_question_in_another_language_is_answered_unretrieved(
    embedder: Any, streaming: bool
) -> None:
    retriever = FixedRetriever(make_context("full"))
    items = list(
        stream_answer(
            SPANISH,
            retriever=retriever,
            generator=ExtractiveGenerator(embedder),
            embedder=embedder,
            streaming=streaming,
        )
    )
    answer = items[-1]
    assert isinstance(answer, Answer)
    assert answer.answer_status == "other_language"
    assert answer.content.startswith("Solo puedo responder en inglés")
    assert items[:-1] == [answer.content]
    assert (answer.sources, answer.events, retriever.questions) == ((), (), [])


def test_without_a_kb_language_every_question_is_retrieved(embedder: Any) -> None:
    retriever = FixedRetriever(make_context("full"))
    answer = answer_question(
        SPANISH,
        retriever=retriever,
        generator=ExtractiveGenerator(embedder),
        embedder=embedder,
        policy=AnswerPolicy(kb_language=None),
    )
    assert retriever.questions == [SPANISH] and answer.answer_status != "other_language"


def test_retrieval_runs_with_the_viewers_filter(embedder: Any) -> None:
    """The pipeline retrieves with ``retrievable_for(viewer)``; left out, the viewer is a
    member in no group (the least a forgetful caller can be shown)."""
    for viewer, expected in (
        (Viewer.member(["enterprise"]), CardFilter(frozenset({"enterprise"}))),
        (Viewer.staff(), CardFilter(None)),
    ):
        retriever = FixedRetriever(make_context())
        answer_question(
            VOID_QUESTION,
            retriever=retriever,
            generator=ExtractiveGenerator(embedder),
            embedder=embedder,
            viewer=viewer,
        )
        assert retriever.filters == [expected]
    forgetful = FixedRetriever(make_context())
    answer_question(
        VOID_QUESTION,
        retriever=forgetful,
        generator=ExtractiveGenerator(embedder),
        embedder=embedder,
    )
    assert forgetful.filters == [CardFilter(frozenset())]
