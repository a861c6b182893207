"""answer_question / stream_answer over a fixed context with the real extractive generator."""

from __future__ import annotations

from typing import Any

import pytest

from citewall.chat.pipeline import NOTHING_FOUND, Answer, answer_question, stream_answer
from citewall.citations.models import StoredSource
from citewall.errors import UserError
from citewall.generation.extractive import ExtractiveGenerator
from citewall.retrieval.types import RetrievedContext

from .chat_context import CANARY_T, KB_URL, FixedRetriever, make_context


def ask(embedder: Any, question: str, context: RetrievedContext) -> Answer:
    return answer_question(
        question,
        retriever=FixedRetriever(context),
        generator=ExtractiveGenerator(embedder),
        embedder=embedder,
    )


def test_full_answer_shape(embedder: Any) -> None:
    answer = ask(embedder, "How long until a voided label refund arrives?", make_context("full"))
    assert answer.hybrid_path == "full" and answer.generator == "extractive"
    assert answer.citations and answer.dropped_markers == 0 and not answer.attributed
    assert "[1]" in answer.content or "[2]" in answer.content
    cited = [c.card_id for c in answer.citations]
    assert set(cited) <= {"help-void", "pb-void-overdue", "help-pickup"}
    by_id = {c.card_id: c for c in answer.citations}
    if "help-void" in by_id:
        c = by_id["help-void"]
        assert c.source_url == KB_URL and c.source_license == "CC-BY-SA-4.0"
        assert c.retrieved_score == 88.0
    if "pb-void-overdue" in by_id:
        c = by_id["pb-void-overdue"]
        assert c.source_url is None and c.retrieved_score == 38.0
    # Sources are FULL stored sources, one per cited card, internal included.
    assert [s["card_id"] for s in answer.sources] == cited
    for s in answer.sources:
        StoredSource.model_validate(s)
        assert set(s) >= {
            "n",
            "card_id",
            "title",
            "text",
            "span",
            "source_url",
            "source_license",
            "retrieved_score",
            "attributed",
            "metadata",
        }
        assert s["metadata"]["content_hash"]
    assert CANARY_T not in answer.content
    # One event per retrieved card, cited flags matching the citations.
    assert [e.card_id for e in answer.events] == ["help-void", "pb-void-overdue", "help-pickup"]
    for e in answer.events:
        assert e.cited == (e.card_id in cited)
        assert e.hybrid_path == "full"
    assert [e.is_external for e in answer.events] == [True, False, True]
    assert answer.timings_ms["total"] >= answer.timings_ms["generate"] > 0


def test_rrf_only_has_no_scores(embedder: Any) -> None:
    answer = ask(
        embedder, "How long until a voided label refund arrives?", make_context("rrf_only")
    )
    assert answer.citations
    assert all(c.retrieved_score is None for c in answer.citations)
    assert all(s["retrieved_score"] is None for s in answer.sources)


def test_nothing_retrieved_is_answered_honestly(embedder: Any) -> None:
    answer = ask(embedder, "What is the capital of Mars?", RetrievedContext())
    assert answer.content == NOTHING_FOUND
    assert answer.citations == [] and answer.sources == [] and answer.events == []
    assert answer.hybrid_path is None


def test_stream_yields_deltas_then_the_same_answer(embedder: Any) -> None:
    context = make_context("full")
    items = list(
        stream_answer(
            "How long until a voided label refund arrives?",
            retriever=FixedRetriever(context),
            generator=ExtractiveGenerator(embedder),
            embedder=embedder,
        )
    )
    *deltas, final = items
    assert all(isinstance(d, str) for d in deltas) and isinstance(final, Answer)
    assert "".join(deltas) == final.content  # type: ignore[arg-type]
    batch = ask(embedder, "How long until a voided label refund arrives?", context)
    assert batch.content == final.content and batch.citations == final.citations


def test_empty_question_is_a_user_error(embedder: Any) -> None:
    with pytest.raises(UserError, match="empty"):
        ask(embedder, "   ", make_context())
    with pytest.raises(UserError, match="empty"):  # nothing visible is left after cleaning
        ask(embedder, "\u200b\u202e \x07", make_context())


def test_the_question_is_cleaned_on_every_path(embedder: Any) -> None:
    # e.g. `citewall ask` with undecodable bytes in argv (a lone surrogate), or invisible
    # characters pasted into a question.
    retriever = FixedRetriever(make_context())
    kwargs: Any = {
        "retriever": retriever,
        "generator": ExtractiveGenerator(embedder),
        "embedder": embedder,
    }
    answer_question("void\udcff a \u202elabel\u200b?\x00", **kwargs)
    list(stream_answer("void\udcff a \u202elabel\u200b?\x00", **kwargs))
    assert retriever.questions == ["void\ufffd a label?"] * 2
