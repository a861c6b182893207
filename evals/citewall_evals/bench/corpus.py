"""A synthetic corpus of any size, recombined from the demo KB's titles and sentences.

Each card is a demo title plus 3-6 sentences drawn from demo bodies (seeded), so text length,
vocabulary and chunking match the real KB while the size is free.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from citewall.ingest.chunking import chunk_card
from citewall.kb.card import Card
from citewall.retrieval.records import ChunkRecord


def synthetic_cards(demo: Sequence[Card], n: int, seed: int = 7) -> list[Card]:
    """``n`` one-chunk cards recombined from the demo KB's titles and sentences."""
    rng = random.Random(seed)
    sentences = [s for c in demo for s in re.split(r"(?<=[.!?])\s+", c.body) if s]
    return [
        Card(
            id=f"syn-{i}",
            title=rng.choice(demo).title,
            body=" ".join(rng.sample(sentences, rng.randint(3, 6))),
        )
        for i in range(n)
    ]


def chunk_records(cards: Sequence[Card]) -> list[ChunkRecord]:
    """Each card as one chunk record (no card here is long enough to be split)."""
    return [r for c in cards for r in chunk_card(c, 10_000)]
