"""Split a card into chunks for the indexes: ``parent_id`` = card id, ids ``<card id>#<n>``.

A card that fits in ``max_words`` is one chunk. A longer card is cut at its headings first, so
a chunk is a section (its heading line included: the answerer reads the section's case from
it); a section still too long is packed by paragraphs, and only a paragraph longer than
``max_words`` on its own is cut between sentences (by words only inside a sentence longer than
that). Paragraphs keep their line breaks: list items and
tab labels stay on their lines for ``citations.outline``.
"""

from __future__ import annotations

import re

from citewall.citations.sentences import split_sentences
from citewall.kb.card import Card
from citewall.retrieval.records import ChunkRecord

_PARAGRAPHS = re.compile(r"\n\s*\n")
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s", re.MULTILINE)


def _sections(text: str) -> list[str]:
    """``text`` cut before each heading line (the first piece may have no heading)."""
    starts = [0, *(m.start() for m in _HEADING_LINE.finditer(text) if m.start() > 0)]
    pieces = [text[a:b].strip() for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    return [p for p in pieces if p]


def _count(text: str) -> int:
    return len(text.split())


def _pack(text: str, max_words: int) -> list[str]:
    """Greedy paragraph packing; a paragraph longer than ``max_words`` is cut by words."""
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for para in (p.strip() for p in _PARAGRAPHS.split(text.strip())):
        n = _count(para)
        if not n:
            continue
        if current and size + n > max_words:
            pieces.append("\n\n".join(current))
            current, size = [], 0
        if n > max_words:
            cut = _cut_paragraph(para, max_words)
            pieces.extend(cut[:-1])
            para, n = cut[-1], _count(cut[-1])
        current.append(para)
        size += n
    if current:
        pieces.append("\n\n".join(current))
    return pieces


def _cut_paragraph(para: str, max_words: int) -> list[str]:
    """A paragraph over ``max_words`` in pieces cut between sentences (a sentence cut in two
    would be two fragments in two chunks); only a sentence longer than that is cut by words."""
    pieces: list[str] = []
    current: list[str] = []
    for sentence in split_sentences(para):
        words = sentence.split()
        if current and len(current) + len(words) > max_words:
            pieces.append(" ".join(current))
            current = []
        while len(words) > max_words:
            pieces.append(" ".join(words[:max_words]))
            words = words[max_words:]
        current += words
    if current:
        pieces.append(" ".join(current))
    return pieces


def split_body(text: str, max_words: int) -> list[str]:
    """The chunk texts of a body: whole when it fits, else by section, then by paragraph."""
    if _count(text) <= max_words:
        return [text.strip()] if text.strip() else []
    return [piece for section in _sections(text) for piece in _pack(section, max_words)]


def chunk_card(card: Card, max_words: int) -> list[ChunkRecord]:
    """Chunks of ``card``'s body, at most ``max_words`` words each (see the module docstring).

    The text stored is the body piece; ``index_text`` prepends the title for embedding and
    BM25, so a chunk deep in a card still carries what the card is about. Every chunk carries
    the card's reply whole (it is what the card lets an answer quote).
    """
    meta = card.full_metadata()
    return [
        ChunkRecord(
            chunk_id=f"{card.id}#{n}",
            parent_id=card.id,
            text=text,
            metadata={
                "n": n,
                "title": card.title,
                "url": card.url,
                "content_hash": meta["content_hash"],
                "card": meta,
            },
            reply=card.reply,
            audiences=card.audiences,
        )
        for n, text in enumerate(split_body(card.body, max_words) or [card.body.strip()])
    ]
