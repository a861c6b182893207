"""The dense index: a Chroma collection of chunk embeddings (embedded or a Chroma server).

We always pass our own embeddings (``embedding_function=None``: Chroma's default would try to
download a model) and switch telemetry off. Cosine space on unit vectors. HNSW parameters are
set for recall (docs/retrieval.md has the measured ANN recall@10 against exact search).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from citewall.errors import RetrievalError
from citewall.kb.audiences import CardFilter
from citewall.retrieval.records import ChunkRecord, Hit, Vector

#: HNSW settings for recall (docs/retrieval.md): ANN recall@10 vs exact search measured 1.0 on
#: the demo KB's real vectors and at 1k synthetic chunks, 0.996 at 10k, but only 0.93-0.95 at
#: 50k on a synthetic corpus of noisy near-duplicates (an open item there).
HNSW_CONFIG: dict[str, Any] = {
    "space": "cosine",
    "ef_construction": 200,
    "ef_search": 128,
    "max_neighbors": 32,
}
#: Chroma caps a single add/upsert; stay well under it.
_WRITE_BATCH = 2000
#: A restricted chunk has ``restricted: True`` and one ``audience.<group>: True`` key per
#: group: Chroma's ``where`` compares scalars, so "shares a group" becomes an ``$or`` of keys.
RESTRICTED_KEY = "restricted"
AUDIENCE_KEY_PREFIX = "audience."


def stored_audiences(meta: Any) -> tuple[str, ...]:
    """A chunk's audiences, read from its Chroma metadata (the ``audience.<group>`` keys)."""
    return tuple(
        sorted(
            str(k)[len(AUDIENCE_KEY_PREFIX) :]
            for k in dict(meta or {})
            if str(k).startswith(AUDIENCE_KEY_PREFIX)
        )
    )


def audience_where(cards: CardFilter) -> dict[str, Any] | None:
    """The Chroma ``where`` that keeps only the chunks ``cards`` allows (None: every chunk).

    A chunk written before audiences existed has no ``restricted`` key; ``$ne`` matches it.

    >>> audience_where(CardFilter(frozenset()))
    {'restricted': {'$ne': True}}
    >>> audience_where(CardFilter(frozenset({"b", "a"})))
    {'$or': [{'restricted': {'$ne': True}}, {'audience.a': True}, {'audience.b': True}]}
    """
    if cards.groups is None:
        return None
    open_to_all: dict[str, Any] = {RESTRICTED_KEY: {"$ne": True}}
    shared = [{AUDIENCE_KEY_PREFIX + g: True} for g in sorted(cards.groups)]
    return {"$or": [open_to_all, *shared]} if shared else open_to_all


def _flatten(record: ChunkRecord) -> dict[str, str | int | float | bool]:
    """Chroma metadata holds only scalars: keep the card's full metadata as JSON, and the
    audiences as boolean keys the ``where`` filter can read."""
    meta = record.metadata
    groups: dict[str, str | int | float | bool] = {
        AUDIENCE_KEY_PREFIX + g: True for g in record.audiences
    }
    return {
        **groups,
        RESTRICTED_KEY: bool(record.audiences),
        "parent_id": record.parent_id,
        "title": str(meta.get("title", "")),
        "url": str(meta.get("url") or ""),
        "n": int(meta.get("n", 0)),
        "content_hash": str(meta.get("content_hash", "")),
        "card_json": json.dumps(meta.get("card", {}), ensure_ascii=False, default=str),
        "reply": record.reply or "",
    }


def _unflatten(chunk_id: str, text: str | None, meta: Any) -> ChunkRecord:
    meta = dict(meta or {})
    try:
        card = json.loads(str(meta.get("card_json") or "{}"))
    except json.JSONDecodeError:
        card = {}
    return ChunkRecord(
        chunk_id=chunk_id,
        parent_id=str(meta.get("parent_id", chunk_id.split("#", 1)[0])),
        text=text or "",
        metadata={
            "title": str(meta.get("title", "")),
            "url": str(meta.get("url") or "") or None,
            "n": int(meta.get("n", 0)),
            "content_hash": str(meta.get("content_hash", "")),
            "card": card,
        },
        reply=str(meta.get("reply") or "") or None,
        audiences=stored_audiences(meta),
    )


def _hits(nearest: list[tuple[str, float]]) -> list[Hit]:
    return [
        Hit(chunk_id=cid, rank=i, score=1.0 - float(d))
        for i, (cid, d) in enumerate(nearest, start=1)
    ]


class ChromaVectorIndex:
    """``VectorIndex`` over one Chroma collection. Errors become ``RetrievalError``."""

    def __init__(self, client: Any, collection_name: str, *, where: str) -> None:
        self._client = client
        self.where = where
        try:
            self._collection = client.get_or_create_collection(
                name=collection_name,
                embedding_function=None,
                configuration={"hnsw": HNSW_CONFIG},
            )
        except Exception as exc:
            raise RetrievalError(f"cannot open Chroma collection at {where}: {exc}") from exc

    @classmethod
    def persistent(cls, path: Path, collection_name: str) -> ChromaVectorIndex:
        """An embedded Chroma in ``path`` (created if missing)."""
        # Deferred: chromadb takes about a second to import; only processes that open an
        # index pay for it.
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        try:
            path.mkdir(parents=True, exist_ok=True)
            client = chromadb.PersistentClient(
                path=str(path), settings=ChromaSettings(anonymized_telemetry=False)
            )
            return cls(client, collection_name, where=str(path))
        except Exception as exc:  # e.g. a read-only data dir: chromadb raises its own errors
            raise RetrievalError(
                f"cannot open the embedded Chroma store in {path}: {exc} "
                "(check that CITEWALL_DATA_DIR exists and is writable)"
            ) from exc

    @classmethod
    def http(cls, url: str, collection_name: str) -> ChromaVectorIndex:
        """A Chroma server (``chroma run``) at ``url``."""
        # Deferred: chromadb takes about a second to import (see ``persistent``).
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        parts = urlsplit(url)
        try:
            client = chromadb.HttpClient(
                host=parts.hostname or "127.0.0.1",
                port=parts.port or (443 if parts.scheme == "https" else 8000),
                ssl=parts.scheme == "https",
                settings=ChromaSettings(anonymized_telemetry=False),
            )
        except Exception as exc:
            raise RetrievalError(f"cannot reach the Chroma server at {url}: {exc}") from exc
        return cls(client, collection_name, where=url)

    def upsert(self, records: Sequence[ChunkRecord], embeddings: npt.NDArray[np.float32]) -> None:
        if len(records) != len(embeddings):
            raise ValueError(f"{len(records)} records but {len(embeddings)} embeddings")
        for start in range(0, len(records), _WRITE_BATCH):
            part = records[start : start + _WRITE_BATCH]
            ids = [r.chunk_id for r in part]
            self._collection.upsert(
                ids=ids,
                embeddings=embeddings[start : start + _WRITE_BATCH],
                documents=[r.text for r in part],
                metadatas=[
                    {**_flatten(r), **gone}
                    for r, gone in zip(part, self._groups_left(ids, part), strict=True)
                ],
            )

    def _groups_left(self, ids: list[str], part: Sequence[ChunkRecord]) -> list[dict[str, None]]:
        """Per record, the ``audience.<group>`` keys its stored chunk has and it no longer
        names, set to None: Chroma's upsert merges metadata, so a card moved from one group to
        another would otherwise stay retrievable for the group it left."""
        stored = self._collection.get(ids=ids, include=["metadatas"])
        before = {
            cid: set(stored_audiences(meta))
            for cid, meta in zip(stored["ids"], stored["metadatas"] or [], strict=True)
        }
        return [
            {
                AUDIENCE_KEY_PREFIX + g: None
                for g in before.get(r.chunk_id, set()) - set(r.audiences)
            }
            for r in part
        ]

    def delete(self, chunk_ids: Sequence[str]) -> None:
        ids = list(chunk_ids)
        for start in range(0, len(ids), _WRITE_BATCH):
            self._collection.delete(ids=ids[start : start + _WRITE_BATCH])

    def query(self, embedding: Vector, k: int, *, cards: CardFilter) -> list[Hit]:
        """Top-k by cosine similarity among the chunks ``cards`` allows (Chroma's ``where``
        pre-filter: a hidden chunk never leaves the store); ``score`` is the cosine (1 -
        Chroma's distance)."""
        # No count() first: it costs as much as the search, and Chroma already returns fewer
        # hits than asked when the collection is smaller (none when it is empty).
        vector = np.asarray(embedding, dtype=np.float32)
        return self._nearest(vector, k, where=audience_where(cards))

    def _search(
        self, vector: Vector, n: int, *, include: list[str], where: dict[str, Any] | None = None
    ) -> Any:
        try:
            return self._collection.query(
                query_embeddings=[vector],
                n_results=n,
                include=include,
                **({"where": where} if where is not None else {}),
            )
        except Exception as exc:
            raise RetrievalError(f"dense search in Chroma at {self.where} failed: {exc}") from exc

    def _nearest(self, vector: Vector, k: int, where: dict[str, Any] | None = None) -> list[Hit]:
        res = self._search(vector, k, include=["distances"], where=where)
        ids = (res.get("ids") or [[]])[0]
        dists = (res.get("distances") or [[]])[0]
        return _hits(list(zip(ids, dists, strict=True)))

    def get(self, chunk_ids: Sequence[str]) -> list[ChunkRecord]:
        """Records for the ids that exist, in the order asked (missing ids are skipped)."""
        if not chunk_ids:
            return []
        try:
            res = self._collection.get(ids=list(chunk_ids), include=["documents", "metadatas"])
        except Exception as exc:
            raise RetrievalError(
                f"reading chunks from Chroma at {self.where} failed: {exc}"
            ) from exc
        docs = res.get("documents") or []
        metas = res.get("metadatas") or []
        found = {
            cid: _unflatten(cid, doc, meta)
            for cid, doc, meta in zip(res["ids"], docs, metas, strict=True)
        }
        return [found[c] for c in chunk_ids if c in found]

    def count(self) -> int:
        try:
            return int(self._collection.count())
        except Exception as exc:
            raise RetrievalError(f"Chroma at {self.where} is not answering: {exc}") from exc

    def all_chunks(self, *, with_embeddings: bool = False) -> tuple[list[ChunkRecord], Any]:
        """Every chunk (and optionally its embedding): BM25 rebuilds and exact-search checks."""
        include = ["documents", "metadatas"] + (["embeddings"] if with_embeddings else [])
        records: list[ChunkRecord] = []
        vectors: list[Any] = []
        total = self.count()
        page = 5000
        for offset in range(0, total, page):
            res = self._collection.get(include=include, limit=page, offset=offset)
            docs = res.get("documents") or []
            metas = res.get("metadatas") or []
            for cid, doc, meta in zip(res["ids"], docs, metas, strict=True):
                records.append(_unflatten(cid, doc, meta))
            if with_embeddings:
                vectors.append(np.asarray(res["embeddings"], dtype=np.float32))
        matrix = np.concatenate(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)
        return records, (matrix if with_embeddings else None)

    def parent_hashes(self) -> dict[str, str]:
        """card id -> content hash of the chunks indexed for it (what is really in the index)."""
        out: dict[str, str] = {}
        total = self.count()
        for offset in range(0, total, 5000):
            res = self._collection.get(include=["metadatas"], limit=5000, offset=offset)
            for meta in res.get("metadatas") or []:
                if meta:
                    parent, digest = str(meta.get("parent_id")), str(meta.get("content_hash", ""))
                    # Chunks of one card with different hashes = a half-replaced card: "changed".
                    out[parent] = digest if out.get(parent, digest) == digest else ""
        return out

    def chunk_ids_for(self, parent_ids: Sequence[str]) -> list[str]:
        """Every chunk id stored for the given card ids."""
        ids: list[str] = []
        parents = list(parent_ids)
        for start in range(0, len(parents), 500):
            res = self._collection.get(
                where={"parent_id": {"$in": parents[start : start + 500]}}, include=[]
            )
            ids.extend(res["ids"])
        return ids
