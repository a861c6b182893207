"""Context built from the demo KB the project ships (real cards, real metadata)."""

from __future__ import annotations

import json
from pathlib import Path

from citewall.kb.card import Card
from citewall.retrieval.types import ContextChunk

DEMO_CARDS = Path(__file__).resolve().parents[2] / "kb" / "demo" / "cards.jsonl"


def demo_cards() -> dict[str, Card]:
    cards = [
        Card.model_validate(json.loads(line))
        for line in DEMO_CARDS.read_text().splitlines()
        if line.strip()
    ]
    return {c.id: c for c in cards}


def as_chunk(card: Card, rank: int = 1) -> ContextChunk:
    return ContextChunk(
        id=card.id,
        text=card.body,
        title=card.title,
        source=card.url,
        metadata=card.full_metadata(),
        reply=card.reply,
        chunk_id=f"{card.id}#0",
        rank=rank,
    )
