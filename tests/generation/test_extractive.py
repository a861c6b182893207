"""The extractive generator with the packaged MiniLM embedder, on demo-KB cards."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from citewall.citations.markers import strip_markers
from citewall.citations.reconcile import reconcile
from citewall.citations.sentences import split_sentences
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
    # Deterministic: the best sentence of the best-ranked card first, then its other relevant
    # sentences in reading order, quoted verbatim, one marker each; the playbook's reply adds
    # what the public page lacks and the question asks (a refund that does not come), last.
    first = (
        "The refund goes back to your Parcelry balance, not your card, once the carrier "
        "confirms the label was never scanned, which usually takes 5 to 10 business days [1]."
    )
    rest = [
        "NorthPost and Ecoroute Parcel labels can be voided up to 28 days after purchase; "
        "SwiftFreight and BlueLine Express allow 14 days [1].",
        "A scanned label cannot be voided [1].",
    ]
    added = (
        "If the carrier has still not confirmed a void long after the usual 5 to 10 business "
        "days, we take the missing refund up with the carrier for you [2]."
    )
    assert text == " ".join([first, *rest, added])
    for sentence in split_sentences(text):
        quoted = strip_markers(sentence)[:-1]  # quoted, not rewritten
        assert quoted in ctx[0].text or quoted in (ctx[1].reply or "")
    assert strip_markers(added)[:-1] not in ctx[1].text, "never the playbook's staff notes"
    r = reconcile(text, ctx)
    assert r.dropped == 0 and r.numbers == (1, 2)
    assert [c.card_id for c in r.citations] == [
        "help-labels-void-label",
        "pb-labels-void-refund-overdue",
    ]
    assert r.citations[0].span == first


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
            text="Staff notes: the billing lead owns refund approvals.",
            # A reply is quoted, so it is filtered like any quoted text.
            reply=(
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
    # The title, URL, link and HTML sentences are skipped; the card's own "[7]" is stripped.
    assert text == (
        "Refunds are approved by the billing lead within two days [1]. "
        "Old refunds were cited as in the previous policy document [1]. "
        "Refunds above 500 USD need a second approval from finance [1]."
    )
    assert reconcile(text, ctx).dropped == 0


def test_nothing_usable_gives_the_honest_no_answer(embedder: Any) -> None:
    ctx = [ContextChunk(id="u", text="https://only.example/a link. ```code```")]
    assert ExtractiveGenerator(embedder).generate("anything?", ctx).text == NO_ANSWER


def test_the_cap_keeps_the_most_relevant_internal_copies(
    embedder: Any, cards: dict[str, Card]
) -> None:
    """With a cap of one, an answer from an internal card quotes one of its sentences of
    ``span_words``+ words: the one it would have put first."""
    question = "I got charged twice for one order's label, clicked buy once"
    ctx = context_for(cards, "pb-labels-duplicate-label-charges", "help-labels-void-label")
    # Quoted from its reply: here the playbook's whole text is what the member may be told.
    ctx[0] = dataclasses.replace(ctx[0], reply=ctx[0].text)
    free = ExtractiveGenerator(embedder).generate(question, ctx).text
    capped = ExtractiveGenerator(embedder, max_internal_sentences=1, span_words=10)
    text = capped.generate(question, ctx).text
    internal_body = cards["pb-labels-duplicate-label-charges"].body
    copies = [
        s
        for s in split_sentences(text)
        if len(strip_markers(s).split()) >= 10 and strip_markers(s).strip(" .") in internal_body
    ]
    free_copies = [
        s
        for s in split_sentences(free)
        if len(strip_markers(s).split()) >= 10 and strip_markers(s).strip(" .") in internal_body
    ]
    assert len(free_copies) > 1, "the uncapped answer quotes several internal sentences"
    assert len(copies) == 1
    assert split_sentences(text)[0] == split_sentences(free)[0]
