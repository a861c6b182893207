"""The lexical index: bm25s over chunk texts, English stemming and stop words, saved atomically.

Layout of ``settings.bm25_dir``::

    CURRENT            # one line: the name of the live version directory
    v-<stamp>/         # bm25s arrays + ids.json + audiences.json + manifest.json

``audiences.json`` maps each restricted chunk to its card's groups; a query masks out the
chunks its ``CardFilter`` does not allow before bm25s picks the top k (docs/audiences.md says
what the hidden chunks still do to the scores).

A build is published with ``versioned_dir.publish`` (atomic: an ingest interrupted at any
point leaves ``CURRENT`` naming a complete, older index). A missing or corrupt artifact raises
``LexicalIndexError`` at load, which the retriever turns into ``dense_only``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import numpy.typing as npt
import Stemmer

from citewall.kb.audiences import CardFilter
from citewall.retrieval.records import Hit
from citewall.retrieval.reloading import ArtifactError
from citewall.retrieval.versioned_dir import POINTER, current_version, publish

FORMAT = "citewall-bm25/1"
AUDIENCES_FILE = "audiences.json"
#: Masks kept per group set: a handful of group combinations cover nearly every member.
_MASK_CACHE = 64


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

    def __init__(
        self,
        model: Any,
        chunk_ids: list[str],
        *,
        version: str,
        audiences: dict[str, tuple[str, ...]] | None = None,
    ) -> None:
        self._model = model
        self._ids = chunk_ids
        self._stemmer = _stemmer()
        self.version = version
        #: Position -> groups, for the restricted chunks only.
        self.audiences: dict[str, tuple[str, ...]] = {
            cid: tuple(g) for cid, g in (audiences or {}).items() if g
        }
        self._restricted = {
            i: self.audiences[cid] for i, cid in enumerate(chunk_ids) if cid in self.audiences
        }
        self._masks: dict[frozenset[str], npt.NDArray[np.float32]] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def _mask(self, cards: CardFilter) -> npt.NDArray[np.float32] | None:
        """1 for a chunk ``cards`` allows, 0 for one it does not (None: every chunk)."""
        if cards.groups is None or not self._restricted:
            return None
        mask = self._masks.get(cards.groups)
        if mask is None:
            mask = np.ones(len(self._ids), dtype=np.float32)
            for i, groups in self._restricted.items():
                if not cards.allows(groups):
                    mask[i] = 0.0
            if len(self._masks) >= _MASK_CACHE:
                self._masks.clear()
            self._masks[cards.groups] = mask
        return mask

    def query(self, text: str, k: int, *, cards: CardFilter) -> list[Hit]:
        """Top-k chunk ids by BM25 among the chunks ``cards`` allows (masked before the top k
        is chosen; only chunks sharing a term with the question)."""
        if not self._ids:
            return []
        tokens = bm25s.tokenize(
            [text], stopwords="en", stemmer=self._stemmer, show_progress=False, return_ids=False
        )
        if not tokens or not tokens[0]:
            return []
        mask = self._mask(cards)
        docs, scores = self._model.retrieve(
            tokens,
            k=min(k, len(self._ids)),
            show_progress=False,
            n_threads=0,
            **({"weight_mask": mask} if mask is not None else {}),
        )
        hits: list[Hit] = []
        for doc, score in zip(docs[0], scores[0], strict=True):
            if float(score) <= 0.0:  # no shared term (or masked out): not a match at all
                continue
            hits.append(Hit(chunk_id=self._ids[int(doc)], rank=len(hits) + 1, score=float(score)))
        return hits


def build_bm25(texts: Sequence[str]) -> Any:
    """Index ``texts`` (title + chunk text) with bm25s (Lucene BM25, k1=1.5, b=0.75)."""
    model = bm25s.BM25()
    if texts:
        model.index(_tokenize(texts, _stemmer()), show_progress=False)
    return model


def save_bm25(
    directory: Path,
    chunk_ids: Sequence[str],
    texts: Sequence[str],
    audiences: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """Build and atomically publish a new index version in ``directory``; returns its name.
    ``audiences``: chunk id -> its card's groups, for the restricted chunks."""
    if len(chunk_ids) != len(texts):
        raise ValueError(f"{len(chunk_ids)} ids but {len(texts)} texts")
    restricted = {cid: sorted(groups) for cid, groups in (audiences or {}).items() if groups}

    def write(tmp: Path, version: str) -> None:
        if chunk_ids:
            build_bm25(texts).save(str(tmp), show_progress=False)
        (tmp / "ids.json").write_text(json.dumps(list(chunk_ids)), encoding="utf-8")
        (tmp / AUDIENCES_FILE).write_text(json.dumps(restricted), encoding="utf-8")
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
    audiences = _read_audiences(vdir)
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
    return BM25Index(model, [str(i) for i in ids], version=version, audiences=audiences)


def _read_audiences(vdir: Path) -> dict[str, tuple[str, ...]]:
    """The restricted chunks of a version (an artifact from before audiences has none)."""
    path = vdir / AUDIENCES_FILE
    if not path.exists():
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LexicalIndexError(f"BM25 index {vdir} is unreadable: {exc}") from exc
    if not isinstance(raw, dict) or not all(
        isinstance(v, list) and all(isinstance(g, str) for g in v) for v in raw.values()
    ):
        raise LexicalIndexError(f"BM25 index {vdir} has a malformed {AUDIENCES_FILE}")
    return {str(k): tuple(v) for k, v in raw.items()}
