"""A read-only vector index held in memory and searched exactly: calibration's copy of the KB.

Calibration (``ingest.calibrate``) asks the KB some 700 probe questions right after ingest.
Through Chroma each probe costs a search and a read of the chunks it found (about 6 ms on the
demo KB, 4-5 s in all); over the chunks and vectors ingest holds anyway, an exact dot product
and a dictionary cost well under a millisecond. Exact search gives the ranking HNSW
approximates (ANN recall@10 on the demo KB: 1.0, docs/retrieval.md), so the probes see what
members' questions see.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from citewall.kb.audiences import CardFilter
from citewall.retrieval.records import ChunkRecord, Hit, Vector


class ExactIndex:
    """``protocols.VectorIndex`` for searching only: ``records`` and their unit vectors."""

    def __init__(self, records: Sequence[ChunkRecord], vectors: npt.NDArray[np.float32]) -> None:
        if len(records) != vectors.shape[0]:
            raise ValueError(f"{len(records)} chunks but {vectors.shape[0]} vectors")
        self._records = {r.chunk_id: r for r in records}
        self._ids = [r.chunk_id for r in records]
        self._vectors = np.ascontiguousarray(vectors, dtype=np.float32)

    def query(self, embedding: Vector, k: int, *, cards: CardFilter) -> list[Hit]:
        """Top ``k`` by cosine similarity (dot product of unit vectors) among the chunks
        ``cards`` allows, ties by position."""
        if not self._ids:
            return []
        scores = self._vectors @ np.asarray(embedding, dtype=np.float32)
        if not cards.everything:
            hidden = [
                i for i, c in enumerate(self._ids) if not cards.allows(self._records[c].audiences)
            ]
            scores[hidden] = -np.inf
            k = min(k, len(self._ids) - len(hidden))
            if k <= 0:
                return []
        k = min(k, len(self._ids))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        return [
            Hit(chunk_id=self._ids[i], rank=rank, score=float(scores[i]))
            for rank, i in enumerate(top, start=1)
        ]

    def get(self, chunk_ids: Sequence[str]) -> list[ChunkRecord]:
        return [self._records[c] for c in chunk_ids if c in self._records]

    def count(self) -> int:
        return len(self._ids)

    def upsert(self, records: Sequence[ChunkRecord], embeddings: npt.NDArray[np.float32]) -> None:
        raise TypeError("ExactIndex is read-only")

    def delete(self, chunk_ids: Sequence[str]) -> None:
        raise TypeError("ExactIndex is read-only")
