"""Split a card into chunks for the indexes: ``parent_id`` = card id, ids ``<card id>#<n>``."""

from __future__ import annotations

import re

from citewall.kb.card import Card
from citewall.retrieval.records import ChunkRecord

_PARAGRAPHS = re.compile(r"\n\s*\n")


def _split_words(text: str, max_words: int) -> list[str]:
    """Greedy paragraph packing; a paragraph longer than ``max_words`` is cut by words."""
    pieces: list[list[str]] = []
    current: list[str] = []
    for para in _PARAGRAPHS.split(text.strip()):
        words = para.split()
        if not words:
            continue
        if current and len(current) + len(words) > max_words:
            pieces.append(current)
            current = []
        while len(words) > max_words:
            if current:
                pieces.append(current)
                current = []
            pieces.append(words[:max_words])
            words = words[max_words:]
        current = current + words
    if current:
        pieces.append(current)
    return [" ".join(p) for p in pieces]


def chunk_card(card: Card, max_words: int) -> list[ChunkRecord]:
    """Chunks of ``card``'s body, at most ``max_words`` words each, paragraphs kept whole.

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
        )
        for n, text in enumerate(_split_words(card.body, max_words) or [card.body.strip()])
    ]
