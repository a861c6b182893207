"""The incremental ingest: cards -> chunks -> embeddings -> Chroma + BM25 + the cards table.

Incremental by content hash: a card whose hash matches both the cards table and the vector
index is skipped; a changed card has its chunks replaced; a card absent from the given paths
is deleted from every index only with ``prune=True`` (``citewall ingest --prune``), so
ingesting one extra file never wipes the rest of the KB. A refused card is never pruned: its
previous version stays.

Order of writes, so an interrupted ingest leaves a usable previous state:
1. embed + upsert new/changed chunks into Chroma, batch by batch (upsert is idempotent);
2. delete stale chunks (removed cards, chunks a shorter new version no longer has);
3. rebuild BM25 and the sentence vectors (``ingest.sentences``) from Chroma's chunks and
   publish each atomically, then refit the abstention calibration on the new KB version
   (``ingest.calibrate``); on shared services (``Settings.shared_kb``) also push each new
   version to the database, where every replica picks it up;
4. commit the cards table (hashes + ingest version) last.
A crash before 4 leaves the old hashes in the cards table, so the next run redoes the work.

On shared services the local artifact directories are a cache: ingest first copies the versions
the database holds into them (``shared_artifacts.pull``), so an ingest from any host with an
empty data dir reuses the stored sentence vectors and embeds only what is new.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from citewall.config import Settings
from citewall.errors import IngestError
from citewall.ingest.calibrate import calibrate, calibration_stale
from citewall.ingest.chunking import chunk_card
from citewall.ingest.loaders import load_cards
from citewall.ingest.sentences import rebuild_sentence_vectors, sentences_in_sync
from citewall.kb.card import Card
from citewall.retrieval.embedder import load_embedder
from citewall.retrieval.factory import open_vector_index
from citewall.retrieval.lexical_index import LexicalIndexError, load_bm25, save_bm25
from citewall.retrieval.protocols import Embedder
from citewall.retrieval.records import ChunkRecord, index_text
from citewall.retrieval.shared_artifacts import ArtifactStore, pull, push
from citewall.retrieval.vector_index import ChromaVectorIndex
from citewall.storage import cards as card_store
from citewall.storage import kb_sources
from citewall.storage.artifacts import DatabaseArtifactStore
from citewall.storage.schema import open_database

#: Chunks embedded and upserted per step: bounds memory and makes progress visible.
EMBED_BATCH = 256


@dataclass(slots=True)
class IngestReport:
    """What one ingest run did. ``refused`` counts cards (and files) with errors."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    refused: int = 0
    errors: list[IngestError] = field(default_factory=list)
    chunks_embedded: int = 0
    #: Sentence units embedded for the stored sentence vectors (new ones only).
    sentences_embedded: int = 0
    embed_s: float = 0.0
    total_s: float = 0.0
    ingest_version: int | None = None
    #: On shared services: the artifact versions every replica now loads (name -> version).
    shared_versions: dict[str, str] = field(default_factory=dict)
    #: The abstention thresholds fitted by this run (None: the KB did not change).
    calibration: str | None = None
    #: Cards read that an admin disabled: kept out of every index.
    disabled: int = 0

    def summary(self) -> str:
        shared = "".join(f"; replicas load {n} {v}" for n, v in self.shared_versions.items())
        if self.calibration:
            shared = f"; abstention calibrated: {self.calibration}{shared}"
        if self.disabled:
            shared = f"; {self.disabled} disabled card(s) kept out of the indexes{shared}"
        return (
            f"added {self.added}, updated {self.updated}, unchanged {self.unchanged}, "
            f"deleted {self.deleted}, refused {self.refused} "
            f"({self.chunks_embedded} chunks and {self.sentences_embedded} sentences embedded "
            f"in {self.embed_s:.1f} s, "
            f"total {self.total_s:.1f} s){shared}"
        )


def _default_session_factory(settings: Settings) -> Any:
    return open_database(settings.sqlalchemy_url).sessions


def _progress(total: int, enabled: bool) -> Any:
    return tqdm(total=total, unit="chunk", desc="embedding", disable=not enabled or total == 0)


def _embed_and_upsert(
    records: list[ChunkRecord],
    embedder: Embedder,
    index: ChromaVectorIndex,
    report: IngestReport,
    progress: bool,
) -> None:
    with _progress(len(records), progress) as bar:
        for start in range(0, len(records), EMBED_BATCH):
            batch = records[start : start + EMBED_BATCH]
            t0 = time.perf_counter()
            vectors = embedder.embed_documents([index_text(r) for r in batch])
            report.embed_s += time.perf_counter() - t0
            index.upsert(batch, vectors)
            report.chunks_embedded += len(batch)
            bar.update(len(batch))


def rebuild_lexical(settings: Settings, records: Sequence[ChunkRecord]) -> str:
    """Rebuild the BM25 artifact from ``records`` (every chunk); publish atomically."""
    ordered = sorted(records, key=lambda r: r.chunk_id)
    return save_bm25(
        settings.bm25_dir,
        [r.chunk_id for r in ordered],
        [index_text(r) for r in ordered],
        {r.chunk_id: r.audiences for r in ordered if r.audiences},
    )


def rebuild_artifacts(
    settings: Settings,
    index: ChromaVectorIndex,
    embedder: Embedder,
    report: IngestReport,
    *,
    lexical: bool,
    sentences: bool,
) -> None:
    """Rebuild the artifacts asked for from every chunk in the vector index."""
    if not (lexical or sentences):
        return
    records, _ = index.all_chunks()
    if lexical:
        rebuild_lexical(settings, records)
    if sentences:
        t0 = time.perf_counter()
        # The reply's sentences are quoted like a body's: their vectors are stored too.
        texts = (text for r in records for text in (r.text, r.reply) if text)
        build = rebuild_sentence_vectors(settings.sentences_dir, texts, embedder)
        report.embed_s += time.perf_counter() - t0
        report.sentences_embedded += build.embedded


def _lexical_in_sync(settings: Settings, chunk_count: int) -> bool:
    try:
        return len(load_bm25(settings.bm25_dir)) == chunk_count
    except LexicalIndexError:
        return False


def ingest_cards(
    cards: Sequence[Card],
    settings: Settings,
    *,
    embedder: Embedder,
    session_factory: Callable[[], Any],
    prune: bool = False,
    keep_ids: set[str] | None = None,
    prune_scope: tuple[str, ...] | None = None,
    prune_only: frozenset[str] | None = None,
    progress: bool = True,
    report: IngestReport | None = None,
    writes_playbooks: bool = False,
) -> IngestReport:
    """Ingest already-validated ``cards`` (see module docstring for the write order).

    ``prune_scope``: id prefixes pruning is confined to (a crawled site's cards);
    ``prune_only``: the ids pruning is confined to (a registered source's cards). With neither,
    pruning removes every card absent from ``cards`` and ``keep_ids``.

    Two kinds of card are never indexed by a run: a disabled card (``cards.disabled_at``; its
    row is updated to its source's version, its chunks are removed from every index) and,
    unless ``writes_playbooks`` (the admin pages' own writes), a playbook: a card of another
    source with a playbook's id is refused, and no pruning removes a playbook.
    """
    report = report or IngestReport()
    t_start = time.perf_counter()
    index = open_vector_index(settings)
    shared: ArtifactStore | None = None
    if settings.shared_kb:
        shared = DatabaseArtifactStore(session_factory)
        pull(shared, "bm25", settings.bm25_dir)
        pull(shared, "sentences", settings.sentences_dir)
        pull(shared, "calibration", settings.calibration_dir)
    with session_factory() as session:
        db_hashes: dict[str, str] = dict(card_store.card_hashes(session))
        disabled = card_store.disabled_ids(session)
        owned = frozenset() if writes_playbooks else kb_sources.cards_of_kind(session, "playbooks")
    indexed = index.parent_hashes()

    # A playbook belongs to the admin pages: another source naming its id is refused.
    for card in cards:
        if card.id in owned:
            report.refused += 1
            report.errors.append(
                IngestError(
                    f"card id {card.id!r} is a playbook written in the admin pages; "
                    "give this card another id",
                    field="id",
                )
            )
    # A disabled card stays out of every index: its catalogue row follows its source.
    held = [c for c in cards if c.id in disabled and c.id not in owned]
    held_changed = [c for c in held if db_hashes.get(c.id) != c.content_hash()]
    report.disabled = len(held)
    cards = [c for c in cards if c.id not in disabled and c.id not in owned]

    changed: list[Card] = []
    for card in cards:
        digest = card.content_hash()
        if db_hashes.get(card.id) == digest and indexed.get(card.id) == digest:
            report.unchanged += 1
            continue
        changed.append(card)
        if card.id in db_hashes or card.id in indexed:
            report.updated += 1
        else:
            report.added += 1

    present = {c.id for c in cards} | {c.id for c in held} | (keep_ids or set()) | owned
    absent = (set(db_hashes) | set(indexed)) - present
    if prune_scope is not None:
        absent = {card_id for card_id in absent if card_id.startswith(prune_scope)}
    if prune_only is not None:
        absent &= prune_only
    removed = sorted(absent) if prune else []
    report.deleted = len(removed)
    # Disabled cards still in an index (just disabled, or an interrupted run) leave it now.
    unindex = sorted((disabled & set(indexed)) - set(removed))

    new_records = [r for card in changed for r in chunk_card(card, settings.chunk_max_words)]
    _embed_and_upsert(new_records, embedder, index, report, progress)

    new_ids = {r.chunk_id for r in new_records}
    leaving = [c.id for c in changed] + removed + unindex
    stale = [cid for cid in index.chunk_ids_for(leaving) if cid not in new_ids]
    index.delete(stale)

    moved = bool(changed or removed or unindex)
    rebuild_artifacts(
        settings,
        index,
        embedder,
        report,
        lexical=moved or not _lexical_in_sync(settings, index.count()),
        sentences=moved or not sentences_in_sync(settings.sentences_dir, embedder),
    )
    if settings.calibration and (moved or calibration_stale(settings)):
        t0 = time.perf_counter()
        fitted = calibrate(settings, embedder, *index.all_chunks(with_embeddings=True))
        if fitted is not None:
            t = fitted.thresholds
            report.calibration = (
                f"min_dense {t.min_dense:.3f}, min_key_coverage {t.min_key_coverage:.2f} "
                f"({sum(fitted.probes.values())} probes, {time.perf_counter() - t0:.1f} s)"
            )
    if shared is not None:
        artifacts = (
            ("bm25", settings.bm25_dir),
            ("sentences", settings.sentences_dir),
            ("calibration", settings.calibration_dir),
        )
        for name, directory in artifacts:
            pushed = push(shared, name, directory)
            if pushed is not None:
                report.shared_versions[name] = pushed

    if changed or removed or held_changed:
        with session_factory() as session:
            version = int(card_store.next_ingest_version(session))
            if changed or held_changed:
                card_store.upsert_cards(session, changed + held_changed, version, commit=False)
            if removed:
                card_store.delete_cards(session, removed, commit=False)
            session.commit()  # one transaction: the catalogue never shows half a run
        report.ingest_version = version
    report.total_s += time.perf_counter() - t_start
    return report


def ingest_paths(
    paths: Sequence[Path | str],
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    session_factory: Callable[[], Any] | None = None,
    prune: bool = False,
    progress: bool = True,
) -> IngestReport:
    """Load, validate and ingest every card under ``paths``; bad cards are refused, not fatal.

    >>> # ingest_paths(["kb/demo/cards.jsonl"], load_settings()).summary()
    """
    t0 = time.perf_counter()
    loaded = load_cards(paths, document_max_bytes=settings.document_max_bytes)
    report = IngestReport(refused=len(loaded.errors), errors=list(loaded.errors))
    if embedder is None:
        embedder = load_embedder(settings)
    if session_factory is None:
        session_factory = _default_session_factory(settings)
    if prune and loaded.unidentified:
        # A card we could not identify might be one we would otherwise delete: keep everything.
        report.errors.append(
            IngestError(
                f"--prune skipped: {loaded.unidentified} error(s) name no card id, so removed "
                "cards cannot be told apart from unreadable ones; fix them and run again"
            )
        )
        prune = False
    report.total_s = time.perf_counter() - t0
    return ingest_cards(
        loaded.cards,
        settings,
        embedder=embedder,
        session_factory=session_factory,
        prune=prune,
        keep_ids=loaded.refused_ids,
        progress=progress,
        report=report,
    )
