"""The embedder a running server uses: stored sentence vectors first, the model for the rest.

``KBEmbedder`` wraps the loaded model (any ``Embedder``) and adds what a chat turn needs
without repeating model work:

- ``embed_sentences`` reads the vectors ingest stored for the cards' sentence units
  (``sentence_store``) and runs the model only over units it does not find;
- ``embed_query`` remembers the last few questions, so the generator scoring sentences against
  the question reuses the vector retrieval computed a moment before in the same turn.

The counters (``stored``, ``embedded``) say how many units came from each; an artifact that is
missing or was built for another dimension is reported by ``status`` and simply not used.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from citewall.retrieval.protocols import Embedder
from citewall.retrieval.records import Vector
from citewall.retrieval.reloading import ReloadingArtifact
from citewall.retrieval.sentence_store import SentenceVectors

#: Questions whose vectors are kept: one turn embeds its query once even under concurrency.
QUERY_MEMO = 32


class KBEmbedder:
    """An ``Embedder`` that also embeds sentence units from the stored vectors."""

    def __init__(
        self, model: Embedder, sentences: ReloadingArtifact[SentenceVectors] | None = None
    ) -> None:
        self.model = model
        self.dimension = model.dimension
        #: Which runtime runs the model ("onnx", "torch"; a model of another kind says neither).
        self.runtime: str = str(getattr(model, "runtime", "other"))
        self._sentences = sentences
        self._memo: OrderedDict[str, Vector] = OrderedDict()
        self._lock = threading.Lock()
        self.stored = 0
        self.embedded = 0

    def embed_query(self, text: str) -> Vector:
        """The question's vector (the model's, remembered for the next few calls)."""
        with self._lock:
            hit = self._memo.get(text)
            if hit is not None:
                self._memo.move_to_end(text)
                return hit
        vector = self.model.embed_query(text)
        with self._lock:
            self._memo[text] = vector
            while len(self._memo) > QUERY_MEMO:
                self._memo.popitem(last=False)
        return vector

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Passages through the model (ingest's chunk embeddings)."""
        return self.model.embed_documents(texts)

    def embed_sentences(self, units: Sequence[str]) -> npt.NDArray[np.float32]:
        """Sentence units (``citations.units``): stored vectors, the model for any missing."""
        store = self._store()
        if store is None:
            vectors = self.model.embed_documents(units)
            found = np.zeros(len(units), dtype=bool)
        else:
            vectors, found = store.lookup(units)
            missing = [i for i, ok in enumerate(found) if not ok]
            if missing:
                vectors[missing] = self.model.embed_documents([units[i] for i in missing])
        with self._lock:
            self.stored += int(found.sum())
            self.embedded += int(len(units) - found.sum())
        return vectors

    def status(self) -> dict[str, Any]:
        """For /readyz: the stored sentence vectors in use, or why none are."""
        if self._sentences is None:
            return {"ok": False, "count": None, "error": "not configured"}
        store, error = self._sentences.current()
        if store is not None and store.dimension != self.dimension:
            error = f"built for dimension {store.dimension}, the embedder has {self.dimension}"
            store = None
        return {
            "ok": store is not None,
            "count": len(store) if store is not None else None,
            "version": store.version if store is not None else None,
            "error": error,
            "stored": self.stored,
            "embedded": self.embedded,
        }

    def _store(self) -> SentenceVectors | None:
        if self._sentences is None:
            return None
        store, _ = self._sentences.current()
        if store is None or store.dimension != self.dimension:
            return None
        return store


def sentence_embedder(embedder: Embedder) -> KBEmbedder:
    """``embedder`` itself when it is a ``KBEmbedder``; else one with no stored vectors (every
    unit goes through the model, as a bare model would)."""
    return embedder if isinstance(embedder, KBEmbedder) else KBEmbedder(embedder)
