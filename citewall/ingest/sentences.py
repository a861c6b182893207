"""Ingest's sentence vectors: every distinct unit of every chunk, embedded once.

Rebuilt after each ingest from all chunks in the vector index, like the lexical index. Vectors
of units the live artifact already holds are copied, so re-ingest embeds only sentences it has
not seen (keys are the unit text's hash: a changed sentence is a new key, a removed one is
simply not copied).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citewall.citations.units import card_units
from citewall.retrieval.protocols import Embedder
from citewall.retrieval.reloading import ArtifactError
from citewall.retrieval.sentence_store import (
    load_sentence_vectors,
    save_sentence_vectors,
    sentence_key,
)


@dataclass(frozen=True, slots=True)
class SentenceBuild:
    """What one rebuild did: units in the new version, how many were embedded, its name."""

    units: int
    embedded: int
    version: str


def distinct_units(texts: Iterable[str]) -> list[str]:
    """The distinct units of ``texts`` (chunk texts), in first-seen order."""
    return list(dict.fromkeys(u for text in texts for u in card_units(text)))


def rebuild_sentence_vectors(
    directory: Path, chunk_texts: Iterable[str], embedder: Embedder
) -> SentenceBuild:
    """Publish the vectors of every unit of ``chunk_texts``, embedding only the new ones."""
    units = distinct_units(chunk_texts)
    vectors = np.zeros((len(units), embedder.dimension), dtype=np.float32)
    found = np.zeros(len(units), dtype=bool)
    try:
        previous = load_sentence_vectors(directory)
    except ArtifactError:
        previous = None
    if previous is not None and previous.dimension == embedder.dimension:
        vectors, found = previous.lookup(units)
    missing = [i for i, ok in enumerate(found) if not ok]
    if missing:
        vectors[missing] = embedder.embed_documents([units[i] for i in missing])
    version = save_sentence_vectors(directory, [sentence_key(u) for u in units], vectors)
    return SentenceBuild(units=len(units), embedded=len(missing), version=version)


def sentences_in_sync(directory: Path, embedder: Embedder) -> bool:
    """Whether a usable artifact for this embedder's dimension is published."""
    try:
        return load_sentence_vectors(directory).dimension == embedder.dimension
    except ArtifactError:
        return False
