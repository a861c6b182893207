"""Small protocols for the retrieval backends; concrete classes are chosen in ``factory``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """A chunk as stored in the indexes. ``parent_id`` is the card id."""

    chunk_id: str
    parent_id: str
    text: str
    metadata: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked hit from a single retriever: chunk id, 1-based rank, native score."""

    chunk_id: str
    rank: int
    score: float


@runtime_checkable
class Embedder(Protocol):
    dimension: int

    def embed_query(self, text: str) -> Vector: ...

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


@runtime_checkable
class VectorIndex(Protocol):
    def upsert(
        self, records: Sequence[ChunkRecord], embeddings: npt.NDArray[np.float32]
    ) -> None: ...

    def delete(self, chunk_ids: Sequence[str]) -> None: ...

    def query(self, embedding: Vector, k: int) -> list[Hit]: ...

    def get(self, chunk_ids: Sequence[str]) -> list[ChunkRecord]: ...

    def count(self) -> int: ...


@runtime_checkable
class LexicalIndex(Protocol):
    def query(self, text: str, k: int) -> list[Hit]: ...


@runtime_checkable
class Reranker(Protocol):
    name: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Raw logits (no sigmoid), one per passage, same order."""
        ...
