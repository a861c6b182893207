"""Reconciliation: markers -> card-level citations within the context, dropped ones counted."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.citations.markers import parse_markers
from citewall.citations.reconcile import reconcile
from citewall.retrieval.types import ContextChunk


def ctx(*ids: str) -> list[ContextChunk]:
    return [ContextChunk(id=i, text=f"text of {i}") for i in ids]


def test_card_level_deduped_in_first_appearance_order_with_spans() -> None:
    text = "Refunds take 5 days [2]. Billing handles it [1, 2]. Again [2][3]."
    r = reconcile(text, ctx("a", "b", "c"))
    assert [c.card_id for c in r.citations] == ["b", "a", "c"]
    assert [c.span for c in r.citations] == [
        "Refunds take 5 days [2].",
        "Billing handles it [1, 2].",
        "Again [2][3].",
    ]
    assert r.dropped == 0
    assert r.numbers == (2, 1, 3)


def test_out_of_range_markers_are_dropped_and_counted() -> None:
    r = reconcile("X [99]. Y [0]. Z [-1]. W [1]. V [4-5].", ctx("a", "b", "c"))
    assert [c.card_id for c in r.citations] == ["a"]
    assert r.dropped == 5  # 99, 0, -1, 4, 5


def test_no_context_drops_everything() -> None:
    r = reconcile("A [1] [2].", [])
    assert r.citations == [] and r.dropped == 2


def test_no_markers_no_citations() -> None:
    r = reconcile("Plain text with no markers.", ctx("a"))
    assert r.citations == [] and r.dropped == 0


def test_same_card_under_two_numbers_is_one_citation() -> None:
    r = reconcile("A [1]. B [2].", ctx("same", "same"))
    assert [c.card_id for c in r.citations] == ["same"]


def test_citations_start_without_enrichment_fields() -> None:
    (c,) = reconcile("A [1].", ctx("a")).citations
    assert c.model_dump(mode="json") == {"card_id": "a", "span": "A [1]."}


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.integers(min_value=-3, max_value=12), max_size=15),
    st.integers(min_value=0, max_value=8),
)
def test_citations_stay_in_context_and_dropped_is_exact(nums: list[int], k: int) -> None:
    context = ctx(*[f"card-{i}" for i in range(k)])
    text = " ".join(f"Sentence {i} [{n}]." for i, n in enumerate(nums))
    r = reconcile(text, context)
    ids = [c.card_id for c in r.citations]
    assert set(ids) <= {c.id for c in context}
    assert len(ids) == len(set(ids))
    assert r.dropped == sum(1 for n in nums if not 1 <= n <= k)
    valid_in_order = list(dict.fromkeys(n for n in nums if 1 <= n <= k))
    assert ids == [context[n - 1].id for n in valid_in_order]
    for c in r.citations:
        assert c.span is not None and c.span in text


# Any text, with marker-like pieces mixed in so most examples carry markers: valid, out of
# range, malformed, full-width, inside code or a link (not markers there).
_PIECES = st.one_of(
    st.text(max_size=20),
    st.sampled_from(
        [
            "[1]",
            "[2, 3]",
            "[1-4]",
            "[0]",
            "[-1]",
            "[9]",
            "［２］",
            "[5-2]",
            "[1-99999]",
            "`[1]`",
            "[2](https://x.example)",
            ". ",
            "\n",
            "[",
            "]",
        ]
    ),
)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(_PIECES, max_size=10).map("".join), st.integers(min_value=0, max_value=5))
def test_reconcile_never_raises_on_any_text(text: str, k: int) -> None:
    context = ctx(*[f"c{i}" for i in range(k)])
    r = reconcile(text, context)
    markers = parse_markers(text)
    numbers = [n for m in markers for n in m.numbers]
    # Dropped: numbers the parser could not represent plus those outside 1..k.
    assert r.dropped == sum(m.invalid for m in markers) + sum(1 for n in numbers if not 1 <= n <= k)
    cited = list(dict.fromkeys(n for n in numbers if 1 <= n <= k))
    assert r.numbers == tuple(cited)
    assert [c.card_id for c in r.citations] == [f"c{n - 1}" for n in cited]
    for c in r.citations:
        assert c.span is not None and c.span in text
