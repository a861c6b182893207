"""A sentence copied from an internal card never carries a public card's marker, whichever
generator wrote it (``keep_copies_internal``, applied in ``pipeline.cite``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from chat.chat_context import FixedRetriever
from hypothesis import given
from hypothesis import strategies as st

from citewall.chat.pipeline import answer_question
from citewall.citations.markers import parse_markers, strip_markers
from citewall.citations.provenance import keep_copies_internal
from citewall.citations.sentences import sentence_index, sentence_spans
from citewall.citations.verbatim import contains_run, words
from citewall.generation.protocols import GeneratedReply, Turn
from citewall.retrieval.types import ContextChunk, RetrievedContext

SHOPIFY = ContextChunk(
    id="help-shopify",
    text="Connect Shopify under Settings, Integrations. Orders sync every 15 minutes.",
    source="https://help.parcelry.example/integrations/shopify",
)
PLAYBOOK = ContextChunk(
    id="pb-shopify-custom-apps",
    text="Custom Shopify apps are not supported by the standard connector. Route those through "
    "our integrations team lead, who decides whether a private app is allowed.",
    reply="Custom Shopify apps need a manual review by our team before they can connect.",
)
CONTEXT = [SHOPIFY, PLAYBOOK]
STAFF_SENTENCE = "Route those through our integrations team lead [1]."


def test_the_walkthroughs_internal_sentence_loses_the_public_chip() -> None:
    text = f"Orders sync every 15 minutes [1]. {STAFF_SENTENCE}"
    out = keep_copies_internal(text, CONTEXT, span_words=10)
    assert (
        out
        == "Orders sync every 15 minutes [1]. Route those through our integrations team lead [2]."
    )
    # Mixed markers keep only the internal number; the public card's own sentence keeps [1].
    mixed = keep_copies_internal(
        "Route those through our integrations team lead [1, 2].", CONTEXT, 10
    )
    assert mixed == "Route those through our integrations team lead [2]."
    # A copied reply sentence is internal too.
    reply = keep_copies_internal(f"{PLAYBOOK.reply[:-1]} [1].", CONTEXT, 10)
    assert [m.numbers for m in parse_markers(reply)] == [(2,)]


def test_a_public_card_that_says_the_same_keeps_its_marker() -> None:
    twin = ContextChunk(
        id="pb-twin", text="Orders sync every 15 minutes for every store we connect."
    )
    text = "Orders sync every 15 minutes [1]."
    assert keep_copies_internal(text, [SHOPIFY, twin], 10) == text
    # Words of no internal card: untouched.
    own = "Open the Integrations page to connect a store [1]."
    assert keep_copies_internal(own, CONTEXT, 10) == own


_WORDS = st.sampled_from(
    [
        "route",
        "those",
        "through",
        "our",
        "integrations",
        "team",
        "lead",
        "orders",
        "sync",
        "every",
        "minutes",
        "shopify",
        "custom",
        "apps",
        "settings",
        "connect",
    ]
)


@given(
    sentences=st.lists(
        st.tuples(
            st.lists(_WORDS, min_size=1, max_size=12), st.lists(st.integers(1, 3), max_size=3)
        ),
        min_size=1,
        max_size=5,
    )
)
def test_no_copied_sentence_cites_a_public_card_and_nothing_else_changes(
    sentences: list[tuple[list[str], list[int]]],
) -> None:
    text = " ".join(
        " ".join(ws) + (f" [{', '.join(map(str, ns))}]" if ns else "") + "." for ws, ns in sentences
    )
    out = keep_copies_internal(text, CONTEXT, span_words=4)
    assert strip_markers(out) == strip_markers(text)  # only markers change
    assert keep_copies_internal(out, CONTEXT, span_words=4) == out  # idempotent
    spans = sentence_spans(out)
    for marker in parse_markers(out):
        start, end = spans[sentence_index(spans, marker.start)]
        # Four words only the playbook holds: that sentence copies it, never under card 1.
        if contains_run(words(out[start:end]), ("route", "those", "through", "our")):
            assert 1 not in marker.numbers


class ScriptedModel:
    """A model-backed generator's stand-in: writes the given text, markers and all."""

    name = "scripted"

    def __init__(self, text: str) -> None:
        self.text = text

    def generate(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn] = ()
    ) -> GeneratedReply:
        return GeneratedReply(text=self.text, generator=self.name)

    def stream(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn] = ()
    ) -> Iterator[str]:
        yield self.text


def test_the_server_drops_the_public_chip_for_any_generator(embedder: Any) -> None:
    context = RetrievedContext(list(CONTEXT), hybrid_path="rrf_only", top_dense=0.8)
    answer = answer_question(
        "Can I connect a custom Shopify app?",
        retriever=FixedRetriever(context),
        generator=ScriptedModel(f"Orders sync every 15 minutes [1]. {STAFF_SENTENCE}"),
        embedder=embedder,
    )
    spans = {c.card_id: c.span for c in answer.citations}
    assert spans == {
        "help-shopify": "Orders sync every 15 minutes [1].",
        "pb-shopify-custom-apps": "Route those through our integrations team lead [2].",
    }
    # Only the internal sentence was copied: the answer no longer cites the public card for it.
    alone = answer_question(
        "Can I connect a custom Shopify app?",
        retriever=FixedRetriever(context),
        generator=ScriptedModel(STAFF_SENTENCE),
        embedder=embedder,
    )
    assert [c.card_id for c in alone.citations] == ["pb-shopify-custom-apps"]
    assert all(s.card_id != "help-shopify" for s in alone.sources)
