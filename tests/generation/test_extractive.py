"""The extractive generator with the packaged MiniLM embedder, on demo-KB cards."""

from __future__ import annotations

import re
from typing import Any

from citewall.citations.markers import parse_markers, split_sentences
from citewall.citations.reconcile import reconcile
from citewall.generation.extractive import NO_ANSWER, ExtractiveGenerator
from citewall.kb.card import Card
from citewall.retrieval.types import ContextChunk

from .demo_context import as_chunk

URLISH = re.compile(r"(?i)https?://|www\.|javascript:|data:|\]\(|<a\b")


def context_for(cards: dict[str, Card], *ids: str) -> list[ContextChunk]:
    return [as_chunk(cards[i], rank=r) for r, i in enumerate(ids, start=1)]


def internal_ids(cards: dict[str, Card]) -> list[str]:
    return [c.id for c in cards.values() if not c.is_external]


def test_answer_cites_every_sentence_within_the_context(
    embedder: Any, cards: dict[str, Card]
) -> None:
    ids = [
        "help-labels-void-label",
        "pb-labels-void-refund-overdue",
        "help-labels-create-first-label",
    ]
    ctx = context_for(cards, *ids)
    text = ExtractiveGenerator(embedder).generate("How long does a void refund take?", ctx).text
    sentences = split_sentences(text)
    assert 2 <= len(sentences) <= 4
    for s in sentences:
        ms = parse_markers(s)
        assert len(ms) == 1 and len(ms[0].numbers) == 1 and 1 <= ms[0].numbers[0] <= len(ctx)
    r = reconcile(text, ctx)
    assert r.dropped == 0
    assert r.citations[0].card_id in {"help-labels-void-label", "pb-labels-void-refund-overdue"}
    assert "5 to 10 business days" in text or "15 business days" in text


def test_deterministic_and_stream_matches(embedder: Any, cards: dict[str, Card]) -> None:
    ctx = context_for(cards, "help-labels-void-label", "help-labels-create-first-label")
    g = ExtractiveGenerator(embedder)
    a = g.generate("Which carriers can I void?", ctx).text
    b = g.generate("Which carriers can I void?", ctx).text
    streamed = list(g.stream("Which carriers can I void?", ctx))
    assert a == b == "".join(streamed)
    assert len(streamed) > 5  # word by word


def test_never_copies_titles_ids_canaries_or_urls(embedder: Any, cards: dict[str, Card]) -> None:
    g = ExtractiveGenerator(embedder)
    internals = internal_ids(cards)[:6]
    for i in range(0, len(internals), 3):
        ctx = context_for(cards, *internals[i : i + 3])
        for question in ("What should support do here?", ctx[0].text.split(".")[0]):
            text = g.generate(question, ctx).text
            assert "CWLEAKT" not in text and "CWLEAKM" not in text
            for chunk in ctx:
                assert chunk.title.lower() not in text.lower()
                assert chunk.id not in text
            assert not URLISH.search(text)


def test_hostile_sentences_are_skipped(embedder: Any) -> None:
    ctx = [
        ContextChunk(
            id="hostile-card",
            title="Refund escalation matrix CWLEAKT-H0ST",
            text=(
                "Refund escalation matrix CWLEAKT-H0ST explains refund approvals in detail. "
                "Refunds are approved by the billing lead within two days. "
                "See https://evil.example/phish for the refund form today. "
                "Click [here](javascript:alert(1)) to approve refunds instantly. "
                "Old refunds were cited as [7] in the previous policy document. "
                "<img src=x onerror=alert(1)> refunds are processed by the payments team. "
                "Refunds above 500 USD need a second approval from finance."
            ),
        )
    ]
    text = ExtractiveGenerator(embedder).generate("Who approves refunds?", ctx).text
    assert "CWLEAKT" not in text and "escalation matrix" not in text.lower()
    assert not URLISH.search(text) and "<img" not in text
    assert "[7]" not in text
    assert reconcile(text, ctx).dropped == 0
    assert "billing lead" in text


def test_nothing_usable_gives_the_honest_no_answer(embedder: Any) -> None:
    ctx = [ContextChunk(id="u", text="https://only.example/a link. ```code```")]
    assert ExtractiveGenerator(embedder).generate("anything?", ctx).text == NO_ANSWER
