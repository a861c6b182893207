"""Incremental ingest against real Chroma, real bm25s and the real cards table (SQLite)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from citewall.ingest.pipeline import ingest_paths
from citewall.kb.audiences import EVERY_CARD
from citewall.retrieval.factory import build_retriever, open_vector_index
from citewall.retrieval.lexical_index import load_bm25
from citewall.storage.cards import card_hashes
from citewall.storage.schema import open_database
from ingest.kbfixtures import CARDS, write_jsonl


def _state(settings: Any) -> tuple[set[str], set[str], dict[str, str]]:
    """(card ids in Chroma, card ids in BM25, cards table hashes)."""
    index = open_vector_index(settings)
    records, _ = index.all_chunks()
    lexical = load_bm25(settings.bm25_dir)
    bm25_parents = {cid.split("#")[0] for cid in lexical._ids}
    db = open_database(settings.sqlalchemy_url)
    with db.sessions() as session:
        hashes = card_hashes(session)
    db.dispose()
    return {r.parent_id for r in records}, bm25_parents, hashes


def test_incremental_reingest_skips_replaces_and_prunes(
    tmp_path: Path, settings: Any, embedder: Any
) -> None:
    kb = write_jsonl(tmp_path / "kb.jsonl", CARDS[:6])
    first = ingest_paths([kb], settings, embedder=embedder, progress=False)
    assert (first.added, first.updated, first.unchanged, first.deleted) == (6, 0, 0, 0)
    chroma, bm25, table = _state(settings)
    assert chroma == bm25 == set(table) == {c["id"] for c in CARDS[:6]}

    again = ingest_paths([kb], settings, embedder=embedder, progress=False)
    assert (again.added, again.updated, again.unchanged, again.chunks_embedded) == (0, 0, 6, 0)

    changed = {**CARDS[0], "body": "Annual plans are refundable for 14 days only."}
    write_jsonl(kb, [changed, *CARDS[2:6], CARDS[6]])  # card 1 removed, card 6 new
    third = ingest_paths([kb], settings, embedder=embedder, progress=False)
    # Without --prune a card missing from the paths stays.
    assert (third.added, third.updated, third.unchanged, third.deleted) == (1, 1, 4, 0)
    assert CARDS[1]["id"] in _state(settings)[2]

    pruned = ingest_paths([kb], settings, embedder=embedder, progress=False, prune=True)
    assert (pruned.added, pruned.updated, pruned.deleted) == (0, 0, 1)
    chroma, bm25, table = _state(settings)
    expected = {c["id"] for c in [changed, *CARDS[2:7]]}
    assert chroma == bm25 == set(table) == expected

    retriever = build_retriever(settings, embedder=embedder, reranker=None)
    ctx = retriever.retrieve("how many days can I get a refund on an annual plan", cards=EVERY_CARD)
    (top,) = [c for c in ctx.chunks if c.id == CARDS[0]["id"]]
    assert "14 days" in top.text  # the replaced text, not the old one
    assert top.metadata["content_hash"] == table[CARDS[0]["id"]]


def test_refused_card_keeps_previous_version_even_with_prune(
    tmp_path: Path, settings: Any, embedder: Any
) -> None:
    kb = write_jsonl(tmp_path / "kb.jsonl", CARDS[:3])
    ingest_paths([kb], settings, embedder=embedder, progress=False)
    write_jsonl(kb, [{**CARDS[0], "url": "javascript:alert(1)"}, *CARDS[1:3]])
    report = ingest_paths([kb], settings, embedder=embedder, progress=False, prune=True)
    assert report.refused == 1 and report.deleted == 0
    assert "unsafe url" in str(report.errors[0]) and report.errors[0].line == 1
    chroma, _, table = _state(settings)
    assert CARDS[0]["id"] in chroma and CARDS[0]["id"] in table


class _FailingEmbedder:
    """The real embedder, made to fail after ``ok_batches`` calls (simulates a crash/kill)."""

    def __init__(self, inner: Any, ok_batches: int) -> None:
        self._inner, self._left = inner, ok_batches
        self.dimension = inner.dimension

    def embed_query(self, text: str) -> Any:
        return self._inner.embed_query(text)

    def embed_documents(self, texts: Any) -> Any:
        if self._left <= 0:
            raise KeyboardInterrupt("ingest interrupted")
        self._left -= 1
        return self._inner.embed_documents(texts)


def test_interrupted_ingest_leaves_previous_index_usable(
    tmp_path: Path, settings: Any, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = write_jsonl(tmp_path / "kb.jsonl", CARDS[:4])
    ingest_paths([kb], settings, embedder=embedder, progress=False)
    version_before = load_bm25(settings.bm25_dir).version
    _, _, table_before = _state(settings)

    monkeypatch.setattr("citewall.ingest.pipeline.EMBED_BATCH", 2)
    changed = {**CARDS[0], "title": "Refunds, rewritten", "body": "Completely new text."}
    write_jsonl(kb, [changed, *CARDS[1:8]])
    with pytest.raises(KeyboardInterrupt):
        ingest_paths([kb], settings, embedder=_FailingEmbedder(embedder, 1), progress=False)

    # BM25 still the old, complete version; cards table untouched; retrieval still fused.
    assert load_bm25(settings.bm25_dir).version == version_before
    assert _state(settings)[2] == table_before
    retriever = build_retriever(settings, embedder=embedder, reranker=None)
    ctx = retriever.retrieve("reset my password", cards=EVERY_CARD)
    assert ctx.hybrid_path == "rrf_only" and ctx.chunks[0].id == CARDS[1]["id"]

    # The next run finishes the job.
    done = ingest_paths([kb], settings, embedder=embedder, progress=False)
    assert done.added + done.updated == 5  # the 4 new cards + the changed one
    chroma, bm25, table = _state(settings)
    assert chroma == bm25 == set(table) == {c["id"] for c in CARDS[:8]}
