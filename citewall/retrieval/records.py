"""What the indexes hold and return: chunk records, ranked hits, and the text that is indexed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """A chunk as stored in the indexes. ``parent_id`` is the card id; ``reply`` is the card's
    member-facing part (internal cards; the same on each of the card's chunks); ``audiences``
    the card's groups, which every index filters on before ranking."""

    chunk_id: str
    parent_id: str
    text: str
    metadata: dict[str, Any]
    reply: str | None = None
    #: The card's audiences (``kb.audiences``): empty, every member may retrieve it.
    audiences: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked hit from a single retriever: chunk id, 1-based rank, native score."""

    chunk_id: str
    rank: int
    score: float


def index_text(record: ChunkRecord) -> str:
    """What gets embedded, BM25-indexed and reranked: the card title, the chunk text, then the
    card's reply (so a question worded as members word it matches too).

    >>> index_text(ChunkRecord("c#0", "c", "Void within 30 days.", {"title": "Voiding"}))
    'Voiding\\nVoid within 30 days.'
    """
    title = str(record.metadata.get("title", ""))
    return "\n".join(part for part in (title, record.text, record.reply) if part)
