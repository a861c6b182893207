"""The lexical index: bm25s over chunk texts, English stemming and stop words, saved atomically.

Layout of ``settings.bm25_dir``::

    CURRENT            # one line: the name of the live version directory
    v-<stamp>/         # bm25s arrays + ids.json + manifest.json

A build is published with ``versioned_dir.publish`` (atomic: an ingest interrupted at any
point leaves ``CURRENT`` naming a complete, older index). A missing or corrupt artifact raises
``LexicalIndexError`` at load, which the retriever turns into ``dense_only``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import Stemmer

from citewall.retrieval.records import Hit
from citewall.retrieval.reloading import ArtifactError
from citewall.retrieval.versioned_dir import POINTER, current_version, publish

FORMAT = "citewall-bm25/1"


class LexicalIndexError(ArtifactError):
    """The BM25 artifact is missing, incomplete or corrupt (the message says which file)."""


def _stemmer() -> Any:
    return Stemmer.Stemmer("english")


def _tokenize(texts: Sequence[str], stemmer: Any) -> Any:
    return bm25s.tokenize(
        list(texts), stopwords="en", stemmer=stemmer, show_progress=False, return_ids=True
    )


class BM25Index:
    """``LexicalIndex`` over a loaded bm25s model; ``score`` is the BM25 score."""

    def __init__(self, model: Any, chunk_ids: list[str], *, version: str) -> None:
        self._model = model
        self._ids = chunk_ids
        self._stemmer = _stemmer()
        self.version = version

    def __len__(self) -> int:
        return len(self._ids)

    def query(self, text: str, k: int) -> list[Hit]:
        """Top-k chunk ids by BM25 (only chunks sharing a term with the question)."""
        if not self._ids:
            return []
        tokens = bm25s.tokenize(
            [text], stopwords="en", stemmer=self._stemmer, show_progress=False, return_ids=False
        )
        if not tokens or not tokens[0]:
            return []
        docs, scores = self._model.retrieve(
            tokens, k=min(k, len(self._ids)), show_progress=False, n_threads=0
        )
        hits: list[Hit] = []
        for doc, score in zip(docs[0], scores[0], strict=True):
            if float(score) <= 0.0:  # no shared term: not a lexical match at all
                continue
            hits.append(Hit(chunk_id=self._ids[int(doc)], rank=len(hits) + 1, score=float(score)))
        return hits


def build_bm25(texts: Sequence[str]) -> Any:
    """Index ``texts`` (title + chunk text) with bm25s (Lucene BM25, k1=1.5, b=0.75)."""
    model = bm25s.BM25()
    if texts:
        model.index(_tokenize(texts, _stemmer()), show_progress=False)
    return model


def save_bm25(directory: Path, chunk_ids: Sequence[str], texts: Sequence[str]) -> str:
    """Build and atomically publish a new index version in ``directory``; returns its name."""
    if len(chunk_ids) != len(texts):
        raise ValueError(f"{len(chunk_ids)} ids but {len(texts)} texts")

    def write(tmp: Path, version: str) -> None:
        if chunk_ids:
            build_bm25(texts).save(str(tmp), show_progress=False)
        (tmp / "ids.json").write_text(json.dumps(list(chunk_ids)), encoding="utf-8")
        manifest = {"format": FORMAT, "count": len(chunk_ids), "version": version}
        (tmp / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")

    return publish(directory, write)


def load_bm25(directory: Path) -> BM25Index:
    """Load the live version, or raise ``LexicalIndexError`` naming what is wrong."""
    version = current_version(directory)
    if version is None:
        raise LexicalIndexError(f"no BM25 index at {directory} (missing {POINTER}); run ingest")
    vdir = directory / version
    try:
        manifest = json.loads((vdir / "manifest.json").read_text(encoding="utf-8"))
        ids = json.loads((vdir / "ids.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LexicalIndexError(f"BM25 index {vdir} is unreadable: {exc}") from exc
    if manifest.get("format") != FORMAT or not isinstance(ids, list):
        raise LexicalIndexError(f"BM25 index {vdir} has an unknown format: {manifest!r}")
    if len(ids) != manifest.get("count"):
        raise LexicalIndexError(
            f"BM25 index {vdir} is inconsistent: {len(ids)} ids, manifest says {manifest['count']}"
        )
    if not ids:
        return BM25Index(None, [], version=version)
    try:
        model = bm25s.BM25.load(str(vdir), show_progress=False)
        n_docs = int(model.scores["num_docs"])
        indptr = np.asarray(model.scores["indptr"])
        data = np.asarray(model.scores["data"])
    except Exception as exc:
        raise LexicalIndexError(
            f"BM25 index {vdir} is corrupt: {type(exc).__name__}: {exc}"
        ) from exc
    if n_docs != len(ids) or indptr.size == 0 or int(indptr[-1]) != data.size:
        raise LexicalIndexError(
            f"BM25 index {vdir} is corrupt: {n_docs} documents for {len(ids)} ids"
        )
    return BM25Index(model, [str(i) for i in ids], version=version)
