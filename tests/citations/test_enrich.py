"""Server-side enrichment: the locked choices A-E of decision 0001, as tests that fail if one
is broken (docs/decisions/0001-server-side-citation-enrichment.md)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.citations.enrich import enrich_citations
from citewall.citations.models import Citation
from citewall.retrieval.types import ContextChunk, RetrievedContext


def chunk(card_id: str, **kw: Any) -> ContextChunk:
    return ContextChunk(id=card_id, text=f"text of {card_id}", **kw)


def test_full_path_sets_all_three_fields_from_the_context() -> None:
    context = RetrievedContext(
        chunks=[
            chunk(
                "pub",
                source="https://help.example/refunds",
                metadata={"license": "CC-BY-4.0"},
                rerank_logit=2.0,
            ),
        ],
        hybrid_path="full",
    )
    (c,) = enrich_citations([Citation(card_id="pub", span="S [1].")], context)
    assert c.source_url == "https://help.example/refunds"
    assert c.source_license == "CC-BY-4.0"
    assert c.retrieved_score == 88.0
    assert c.span == "S [1]."


def test_choice_b_no_score_on_any_non_full_path() -> None:
    for path in ("rrf_only", "dense_only", None):
        context = RetrievedContext(
            chunks=[chunk("a", rerank_logit=3.0, rrf_score=0.03, dense_score=0.9)],
            hybrid_path=path,  # type: ignore[arg-type]
        )
        (c,) = enrich_citations([Citation(card_id="a")], context)
        assert c.retrieved_score is None, path
        assert "retrieved_score" not in c.model_dump(mode="json")


def test_choice_a_score_never_comes_from_rrf_or_dense() -> None:
    context = RetrievedContext(
        chunks=[chunk("a", rerank_logit=None, rrf_score=0.9, dense_score=0.99)],
        hybrid_path="full",
    )
    (c,) = enrich_citations([Citation(card_id="a")], context)
    assert c.retrieved_score is None


def test_numpy_logit_is_accepted() -> None:
    context = RetrievedContext(
        chunks=[chunk("a", rerank_logit=np.float32(-1.0))], hybrid_path="full"
    )
    (c,) = enrich_citations([Citation(card_id="a")], context)
    assert c.retrieved_score == 27.0


def test_nan_and_infinite_logits_leave_the_score_absent() -> None:
    for logit in (math.nan, math.inf, -math.inf):
        context = RetrievedContext(chunks=[chunk("a", rerank_logit=logit)], hybrid_path="full")
        (c,) = enrich_citations([Citation(card_id="a")], context)
        assert c.retrieved_score is None


def test_unsafe_source_and_bad_license_are_absent() -> None:
    for source in (
        "javascript:alert(1)",
        "data:text/html,x",
        "https://a b",
        "",
        "//evil.example",
        "http://user:pw@evil.example/",
    ):
        context = RetrievedContext(chunks=[chunk("a", source=source, metadata={"license": 3})])
        (c,) = enrich_citations([Citation(card_id="a")], context)
        assert c.source_url is None, source
        assert c.source_license is None


def test_missing_chunk_gives_absent_fields_and_keeps_the_citation() -> None:
    context = RetrievedContext(
        chunks=[chunk("other", source="https://e.example")], hybrid_path="full"
    )
    (c,) = enrich_citations([Citation(card_id="gone", span="x")], context)
    assert c == Citation(card_id="gone", span="x")


def test_choice_e_card_id_alone_serialises_without_the_three_fields() -> None:
    assert Citation(card_id="x").model_dump(mode="json") == {"card_id": "x"}
    assert Citation.model_validate_json('{"card_id": "x"}') == Citation(card_id="x")


def test_choice_c_a_failing_item_is_returned_unchanged() -> None:
    class Weird:
        card_id = property(lambda self: (_ for _ in ()).throw(RuntimeError("boom")))

    good = Citation(card_id="a")
    weird: Any = Weird()
    context = RetrievedContext(chunks=[chunk("a", source="https://e.example/a")])
    out = enrich_citations([weird, good], context)
    assert out[0] is weird
    assert out[1].source_url == "https://e.example/a"


def test_broken_context_returns_citations_unchanged() -> None:
    cits = [Citation(card_id="a")]
    broken: Any = object()
    assert enrich_citations(cits, broken) == cits


def test_a_model_url_in_the_span_never_becomes_the_source_url() -> None:
    context = RetrievedContext(chunks=[chunk("internal")], hybrid_path="full")
    (c,) = enrich_citations(
        [Citation(card_id="internal", span="See https://evil.example/x [1].")], context
    )
    assert c.source_url is None


# -- properties -------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
weird_values = json_values | st.builds(object) | st.just(float("nan")) | st.binary(max_size=5)
logits = (
    st.none()
    | st.floats(min_value=-20, max_value=20)  # a reranker's usual range: a score is set
    | st.floats()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.booleans()
    | st.text(max_size=3)
)
sources = (
    st.none()
    | st.sampled_from(["https://help.example/a", "http://kb.example/b?c=d"])  # verified
    | st.text(max_size=30)
    | st.sampled_from(["https://ok.example/a", "javascript:x", "http://", "https://e.example/\x00"])
    | st.integers()
)
paths = st.one_of(st.just("full"), st.sampled_from(["rrf_only", "dense_only", None, "FULL", 3]))


@st.composite
def contexts(draw: st.DrawFn) -> tuple[RetrievedContext, list[Citation]]:
    ids = draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=4))
    chunks = []
    for card_id in ids:
        meta = draw(
            st.one_of(
                st.dictionaries(st.sampled_from(["license", "url", "x"]), weird_values, max_size=3),
                weird_values,
                # A usable or blank license, so the license branch below is exercised too.
                st.fixed_dictionaries({"license": st.sampled_from(["CC-BY-4.0", "MIT", " ", ""])}),
            )
        )
        c = ContextChunk(id=card_id, text="t")
        # Assign after construction: the dataclass does not validate, so anything can sit here.
        c.source = draw(sources)  # type: ignore[assignment]
        c.metadata = meta  # type: ignore[assignment]
        c.rerank_logit = draw(logits)  # type: ignore[assignment]
        chunks.append(c)
    context = RetrievedContext(chunks=chunks, hybrid_path=draw(paths))  # type: ignore[arg-type]
    cits = [
        Citation(card_id=i)
        for i in draw(st.lists(st.sampled_from(["a", "b", "c", "z"]), max_size=5))
    ]
    return context, cits


@settings(max_examples=examples(400), deadline=None)
@given(contexts())
def test_enrichment_never_raises_and_obeys_every_locked_choice(
    case: tuple[RetrievedContext, list[Citation]],
) -> None:
    from citewall.kb.urls import url_problem

    context, cits = case
    out = enrich_citations(cits, context)
    assert [c.card_id for c in out] == [c.card_id for c in cits]
    for c in out:
        assert isinstance(c, Citation)
        if c.retrieved_score is not None:
            assert context.hybrid_path == "full"
            assert 0.0 <= c.retrieved_score <= 100.0
            assert c.retrieved_score == math.floor(c.retrieved_score)
        if c.source_url is not None:
            assert url_problem(c.source_url) is None
            assert c.source_url in [ch.source for ch in context.chunks if ch.id == c.card_id]
        if c.source_license is not None:
            assert isinstance(c.source_license, str) and c.source_license.strip()
        c.model_dump_json()  # always serialisable
