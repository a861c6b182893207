"""Internal cards reach a member's prose only through their reply: the extractive generator
never quotes staff notes, and a model is given both parts, labelled."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from citewall.citations.verbatim import words
from citewall.generation.extractive import NO_ANSWER, ExtractiveGenerator
from citewall.generation.prompt import (
    MEMBER_LABEL,
    STAFF_LABEL,
    SYSTEM_PROMPT,
    build_messages,
    format_context,
)
from citewall.retrieval.types import ContextChunk

# Three disjoint vocabularies: a staff word in an answer can only have come from staff notes.
STAFF_WORDS = ["helm", "escalate", "tier", "ledger", "macro", "override", "supervisor", "ticket"]
MEMBER_WORDS = ["credit", "invoice", "parcel", "refund", "delivery", "account", "email", "week"]
PUBLIC_WORDS = ["label", "printer", "carrier", "void", "thermal", "sheet", "order", "scan"]


def sentences(vocabulary: list[str]) -> st.SearchStrategy[str]:
    sentence = st.lists(st.sampled_from(vocabulary), min_size=5, max_size=9).map(
        lambda ws: " ".join(ws).capitalize() + "."
    )
    return st.lists(sentence, min_size=1, max_size=4).map(" ".join)


internal_chunk = st.builds(
    lambda i, body, reply: ContextChunk(id=f"pb-{i}", title="Playbook", text=body, reply=reply),
    st.integers(0, 99),
    sentences(STAFF_WORDS),
    st.one_of(st.none(), sentences(MEMBER_WORDS)),
)
public_chunk = st.builds(
    lambda i, body: ContextChunk(id=f"help-{i}", text=body, source=f"https://h.test/{i}"),
    st.integers(0, 99),
    sentences(PUBLIC_WORDS),
)


@settings(max_examples=30, deadline=None)
@given(
    chunks=st.lists(st.one_of(internal_chunk, public_chunk), min_size=1, max_size=4),
    question=st.lists(st.sampled_from(STAFF_WORDS + MEMBER_WORDS), min_size=2, max_size=6),
)
def test_extractive_never_quotes_a_staff_body(
    embedder: Any, chunks: list[ContextChunk], question: list[str]
) -> None:
    """Whatever the context and however the question echoes the staff notes, no answer word
    comes from them; an internal card without a reply adds nothing."""
    text = ExtractiveGenerator(embedder).compose(" ".join(question), chunks)
    assert not set(words(text)) & set(STAFF_WORDS)
    quotable = [c for c in chunks if c.is_external or c.reply]
    if not quotable:
        assert text == NO_ANSWER


def test_a_playbook_is_quoted_from_its_reply_and_still_ranks(embedder: Any) -> None:
    staff = ContextChunk(
        id="pb-late",
        title="Late parcels",
        text="Log the goodwill credit in Helm with reason code GW-OUTAGE and tell the team lead.",
        reply="A parcel that arrives late gets a goodwill credit on your next invoice.",
    )
    bare = ContextChunk(id="pb-bare", title="Bare", text=staff.text.replace("goodwill", "small"))
    gen = ExtractiveGenerator(embedder)
    question = "My parcel arrived late, can you give me a goodwill credit?"
    assert gen.compose(question, [staff]) == (
        "A parcel that arrives late gets a goodwill credit on your next invoice [1]."
    )
    assert gen.compose(question, [bare]) == NO_ANSWER
    # The bare card keeps its rank: the reply of the second card is cited as [2].
    assert gen.compose(question, [bare, staff]).endswith("[2].")


def test_the_prompt_gives_both_parts_labelled_and_the_rule() -> None:
    playbook = ContextChunk(
        id="pb-late",
        text="Log it in Helm with reason code GW-OUTAGE.",
        reply="Late parcels get a goodwill credit.",
    )
    bare = ContextChunk(id="pb-bare", text="Escalate to Tier 2.")
    public = ContextChunk(id="help", text="Track a parcel from Orders.", source="https://h.test/")
    block = format_context([public, playbook, bare])
    first, second, third = block.split("\n\n[")
    assert STAFF_LABEL not in first and MEMBER_LABEL not in first
    assert second.index(STAFF_LABEL) < second.index("Helm") < second.index(MEMBER_LABEL)
    assert second.index(MEMBER_LABEL) < second.index("Late parcels get a goodwill credit.")
    assert "private" in second
    assert third.index("Tier 2") < third.index(MEMBER_LABEL) < third.index("(nothing")
    system = build_messages("Late?", [playbook])[0]["content"]
    assert system == SYSTEM_PROMPT
    assert "Tell the member" in system and "Staff notes" in system
    assert "Never name internal tools" in system and "people" in system
    assert "only what the" in system and "member needs" in system
