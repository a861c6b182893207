"""Small protocols for the retrieval backends; concrete classes are chosen in ``factory``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from citewall.kb.audiences import CardFilter
from citewall.retrieval.records import ChunkRecord, Hit, Vector
from citewall.retrieval.types import RetrievedContext


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

    def query(self, embedding: Vector, k: int, *, cards: CardFilter) -> list[Hit]: ...

    def get(self, chunk_ids: Sequence[str]) -> list[ChunkRecord]: ...

    def count(self) -> int: ...


@runtime_checkable
class LexicalIndex(Protocol):
    #: Which published build this is (the retriever reports it; a new one is reloaded).
    version: str

    @property
    def audiences(self) -> Mapping[str, tuple[str, ...]]:
        """chunk id -> its card's audiences, for the restricted chunks of this build."""
        ...

    def query(self, text: str, k: int, *, cards: CardFilter) -> list[Hit]: ...

    def __len__(self) -> int: ...


@runtime_checkable
class Reranker(Protocol):
    name: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Raw logits (no sigmoid), one per passage, same order."""
        ...


@runtime_checkable
class Retriever(Protocol):
    """What the rest of citewall asks of retrieval (``HybridRetriever`` is the implementation)."""

    def retrieve(
        self, question: str, k: int | None = None, *, cards: CardFilter
    ) -> RetrievedContext:
        """The top ``k`` cards (default: the configured context size) among those ``cards``
        allows (``kb.audiences.retrievable_for``), best first."""
        ...

    def status(self) -> dict[str, Any]:
        """A self-report for readiness checks (index sizes, reranker state and why)."""
        ...
