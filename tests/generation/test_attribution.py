"""Post-hoc attribution with the packaged MiniLM embedder."""

from __future__ import annotations

from typing import Any

from citewall.citations.markers import parse_markers
from citewall.citations.reconcile import reconcile
from citewall.generation.attribution import ATTRIBUTION_THRESHOLD, attribute
from citewall.retrieval.types import ContextChunk

CTX = [
    ContextChunk(
        id="void",
        text="A scanned label cannot be voided. Voided label refunds go back "
        "to your Parcelry balance within 5 to 10 business days.",
    ),
    ContextChunk(
        id="pickup",
        text="You can schedule a carrier pickup from the Pickups page. "
        "Pickups must be booked before 2 pm for same-day collection.",
    ),
]


def test_paraphrased_sentences_are_attributed_to_their_card(embedder: Any) -> None:
    reply = (
        "Refunds for voided labels return to your Parcelry balance in 5-10 business days. "
        "Book a pickup before 2 pm to have it collected the same day."
    )
    out = attribute(reply, CTX, embedder)
    assert [m.numbers for m in parse_markers(out)] == [(1,), (2,)]
    assert out.replace(" [1]", "").replace(" [2]", "") == reply
    r = reconcile(out, CTX)
    assert [c.card_id for c in r.citations] == ["void", "pickup"]


def test_unrelated_or_tiny_sentences_are_not_attributed(embedder: Any) -> None:
    reply = "Sure! The Eiffel Tower is in Paris and was finished in 1889."
    assert attribute(reply, CTX, embedder) == reply
    assert 0.3 <= ATTRIBUTION_THRESHOLD <= 0.8


def test_no_context_or_empty_text(embedder: Any) -> None:
    assert attribute("Anything at all here today.", [], embedder) == "Anything at all here today."
    assert attribute("", CTX, embedder) == ""
