"""Sentence vectors computed at ingest: a published artifact mapping a unit's text to its vector.

The extractive generator and post-hoc attribution compare the question and the answer with the
sentences of the retrieved cards. Those sentences are known at ingest, so ingest embeds each
distinct unit once (``ingest.sentences``) and a turn reads the vectors instead of running the
model over them. Keys are a hash of the unit's text, so a vector can never belong to other text:
re-ingest reuses the vectors of unchanged sentences and embeds only new ones, and a unit a turn
does not find (an older artifact, mid-ingest) is embedded on the spot, never answered wrongly.

Layout (a ``versioned_dir`` version)::

    keys.npy        # (n,) |S16, sorted: blake2b-128 of each unit's UTF-8 text
    vectors.npy     # (n, dimension) float32 unit vectors, row i for keys[i]
    manifest.json   # format, count, dimension

Both arrays are memory-mapped: a large KB costs page cache, not process memory per replica.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from citewall.retrieval.reloading import ArtifactError
from citewall.retrieval.versioned_dir import POINTER, current_version, publish

FORMAT = "citewall-sentences/1"
KEY_BYTES = 16


class SentenceStoreError(ArtifactError):
    """The sentence-vector artifact is missing, unreadable or inconsistent."""


def sentence_key(text: str) -> bytes:
    """The 16-byte key of a unit's text."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=KEY_BYTES).digest()


class SentenceVectors:
    """A loaded artifact: ``lookup`` answers which texts have a stored vector, and the vectors."""

    def __init__(
        self, keys: npt.NDArray[np.bytes_], vectors: npt.NDArray[np.float32], *, version: str
    ) -> None:
        self._keys = keys
        self._vectors = vectors
        self.version = version
        self.dimension = int(vectors.shape[1])

    def __len__(self) -> int:
        return int(self._keys.shape[0])

    def lookup(self, texts: Sequence[str]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """A (len(texts), dimension) array and a mask of the rows found; rows not found are
        zero."""
        return self.lookup_keys([sentence_key(t) for t in texts])

    def lookup_keys(
        self, keys: Sequence[bytes]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """``lookup`` by key."""
        out = np.zeros((len(keys), self.dimension), dtype=np.float32)
        if not keys or not len(self):
            return out, np.zeros(len(keys), dtype=bool)
        wanted = np.array(list(keys), dtype=f"S{KEY_BYTES}")
        pos = np.minimum(np.searchsorted(self._keys, wanted), len(self) - 1)
        found = self._keys[pos] == wanted
        out[found] = self._vectors[pos[found]]
        return out, found


def write_vectors(
    folder: Path, keys: Sequence[bytes], vectors: npt.NDArray[np.float32], version: str
) -> None:
    """Write ``vectors`` (row i for ``keys[i]``, in any order) into ``folder`` in this layout
    (``load_vectors`` reads it back); other artifacts keep vectors of their own this way."""
    if len(keys) != vectors.shape[0]:
        raise ValueError(f"{len(keys)} keys but {vectors.shape[0]} vectors")
    key_array = np.array(list(keys), dtype=f"S{KEY_BYTES}")
    order = np.argsort(key_array, kind="stable")
    np.save(folder / "keys.npy", key_array[order])
    np.save(folder / "vectors.npy", np.ascontiguousarray(vectors[order], dtype=np.float32))
    manifest = {
        "format": FORMAT,
        "count": len(keys),
        "dimension": int(vectors.shape[1]),
        "version": version,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def save_sentence_vectors(
    directory: Path, keys: Sequence[bytes], vectors: npt.NDArray[np.float32]
) -> str:
    """Publish ``vectors`` (row i for ``keys[i]``, in any order) as a new version."""
    if len(keys) != vectors.shape[0]:
        raise ValueError(f"{len(keys)} keys but {vectors.shape[0]} vectors")
    return publish(directory, lambda tmp, version: write_vectors(tmp, keys, vectors, version))


def load_sentence_vectors(directory: Path) -> SentenceVectors:
    """Memory-map the live version, or raise ``SentenceStoreError`` naming what is wrong."""
    version = current_version(directory)
    if version is None:
        raise SentenceStoreError(
            f"no sentence vectors at {directory} (missing {POINTER}); run ingest"
        )
    return load_vectors(directory / version, version)


def load_vectors(vdir: Path, version: str) -> SentenceVectors:
    """Memory-map the vectors ``write_vectors`` wrote in ``vdir``, or raise
    ``SentenceStoreError`` naming what is wrong."""
    try:
        manifest = json.loads((vdir / "manifest.json").read_text(encoding="utf-8"))
        # An empty array cannot be memory-mapped; it costs nothing to read.
        mapped = bool(manifest.get("count"))
        keys = np.load(vdir / "keys.npy", mmap_mode="r" if mapped else None)
        vectors = np.load(vdir / "vectors.npy", mmap_mode="r" if mapped else None)
    except (OSError, ValueError, AttributeError) as exc:
        raise SentenceStoreError(f"sentence vectors {vdir} are unreadable: {exc}") from exc
    if manifest.get("format") != FORMAT:
        raise SentenceStoreError(f"sentence vectors {vdir} have an unknown format: {manifest!r}")
    count, dim = manifest.get("count"), manifest.get("dimension")
    if keys.dtype != np.dtype(f"S{KEY_BYTES}") or keys.shape != (count,):
        raise SentenceStoreError(f"sentence vectors {vdir}: keys do not match the manifest")
    if vectors.dtype != np.float32 or vectors.shape != (count, dim):
        raise SentenceStoreError(f"sentence vectors {vdir}: vectors do not match the manifest")
    return SentenceVectors(keys, vectors, version=version)
