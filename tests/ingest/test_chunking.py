"""Chunking: ids ``<card>#<n>``, parent = card id, at most ``max_words`` words, title indexed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from citewall.ingest.chunking import chunk_card
from citewall.kb.card import Card
from citewall.retrieval.records import index_text

_WORD = st.text("abcdefghij", min_size=1, max_size=8)
_PARA = st.lists(_WORD, min_size=1, max_size=60).map(" ".join)


@given(st.lists(_PARA, min_size=1, max_size=8), st.integers(min_value=20, max_value=70))
def test_chunks_cover_body_in_order_within_limit(paras: list[str], max_words: int) -> None:
    card = Card(id="c-1", title="Title here", body="\n\n".join(paras))
    chunks = chunk_card(card, max_words)
    assert [c.chunk_id for c in chunks] == [f"c-1#{n}" for n in range(len(chunks))]
    assert all(c.parent_id == "c-1" for c in chunks)
    assert all(len(c.text.split()) <= max_words for c in chunks)
    assert " ".join(c.text for c in chunks).split() == card.body.split()
    assert all(index_text(c).startswith("Title here\n") for c in chunks)
    assert chunks[0].metadata["card"] == card.full_metadata()


_SECTION = st.tuples(
    st.lists(_WORD, min_size=1, max_size=3).map(" ".join),
    st.lists(_PARA, min_size=1, max_size=3),
)


@given(st.lists(_SECTION, min_size=2, max_size=6), st.integers(min_value=20, max_value=70))
def test_a_long_card_is_cut_at_its_sections(
    sections: list[tuple[str, list[str]]], max_words: int
) -> None:
    body = "\n\n".join(f"## {h}\n\n" + "\n\n".join(paras) for h, paras in sections)
    card = Card(id="c-2", title="Title here", body=body)
    chunks = chunk_card(card, max_words)
    assert [c.chunk_id for c in chunks] == [f"c-2#{n}" for n in range(len(chunks))]
    assert " ".join(c.text for c in chunks).split() == body.split()
    if len(body.split()) > max_words:
        # No chunk holds two sections: a heading line only ever opens a chunk.
        for c in chunks:
            assert all(not line.startswith("## ") for line in c.text.splitlines()[1:])


def test_lines_survive_chunking_so_lists_stay_lists() -> None:
    """Before: every chunk was re-joined by single spaces, so "1. Open.\\n\\n2. Save." became
    one line and the outline saw no list."""
    body = "Intro words here.\n\n## Set up\n\n1. Open the menu.\n\n2. Save the form."
    (chunk,) = chunk_card(Card(id="c-3", title="T", body=body), 180)
    assert chunk.text == body


def test_a_long_paragraph_is_cut_between_sentences() -> None:
    """Before: a paragraph over ``max_words`` was cut by words, so "close the account with" and
    "reason FRAUD-SUSPECTED and void unscanned labels." were quoted from two chunks."""
    sentences = [f"Sentence number {n} has exactly seven words." for n in range(10)]
    card = Card(id="c-4", title="T", body=" ".join(sentences))
    chunks = chunk_card(card, 20)
    assert [c.text for c in chunks] == [" ".join(sentences[i : i + 2]) for i in range(0, 10, 2)]
