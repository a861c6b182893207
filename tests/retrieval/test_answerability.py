"""The answerability signals and the threshold decision."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.retrieval.answerability import COVERAGE_CARDS, Signals, Thresholds, measure
from citewall.retrieval.types import ContextChunk, RetrievedContext


def chunk(text: str, title: str = "", dense: float | None = None) -> ContextChunk:
    return ContextChunk(id=text[:8], text=text, title=title, dense_score=dense)


def test_dense_is_the_best_similarity_retrieval_saw_not_what_the_context_kept() -> None:
    context = RetrievedContext([chunk("Refunds take days.", dense=0.3)], top_dense=0.7)
    assert measure("refunds", context).dense == 0.7


def test_without_top_dense_the_context_s_best_is_used() -> None:
    chunks = [chunk("a b c", dense=0.2), chunk("d e f", dense=0.5), chunk("g h", dense=None)]
    assert measure("x", RetrievedContext(chunks)).dense == 0.5


def test_coverage_counts_terms_of_the_top_cards_titles_and_texts() -> None:
    chunks = [chunk("Void a label within 14 days.", title="Voiding"), chunk("Phone support.")]
    chunks += [chunk(f"filler {i}") for i in range(COVERAGE_CARDS)]
    chunks.append(chunk("saturday hours"))  # beyond COVERAGE_CARDS: does not count
    signals = measure("void label phone saturday", RetrievedContext(chunks, top_dense=0.5))
    assert signals.coverage == 0.75


def test_a_question_of_stopwords_only_has_no_coverage() -> None:
    assert measure("how do i", RetrievedContext([chunk("how do i")])).coverage == 0.0


@settings(max_examples=examples(200))
@given(
    dense=st.floats(-1, 1),
    coverage=st.floats(0, 1),
    min_dense=st.floats(-1, 1),
    min_coverage=st.floats(0, 1),
)
def test_answerable_iff_both_signals_reach_their_thresholds(
    dense: float, coverage: float, min_dense: float, min_coverage: float
) -> None:
    t = Thresholds(min_dense=min_dense, min_coverage=min_coverage)
    expected = dense >= min_dense and coverage >= min_coverage
    assert t.answerable(Signals(dense=dense, coverage=coverage)) is expected
