"""The KB's artifacts shared through the database: what one ingest pushes, every replica pulls,
whole and checked, or not at all. On SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from citewall.config import load_settings
from citewall.errors import StorageError
from citewall.kb.audiences import EVERY_CARD, CardFilter
from citewall.retrieval import shared_artifacts
from citewall.retrieval.factory import live_artifact
from citewall.retrieval.lexical_index import BM25Index, load_bm25, save_bm25
from citewall.retrieval.shared_artifacts import (
    SharedArtifactError,
    StoredVersion,
    StoreProbe,
    pull,
    push,
)
from citewall.retrieval.versioned_dir import POINTER, current_version
from citewall.storage.artifacts import KEEP_VERSIONS, DatabaseArtifactStore, shared_store
from citewall.storage.models import KBArtifact, KBArtifactPart

TEXTS = {
    "void": "Void a shipping label within 28 days to get a refund.",
    "reprint": "Reprint a label from the order page at no cost.",
    "refund": "Refunds for voided labels arrive in 15 business days.",
}


def build(directory: Path, texts: dict[str, str] = TEXTS) -> str:
    return save_bm25(directory, list(texts), list(texts.values()))


def top_id(index: BM25Index, query: str) -> str:
    return index.query(query, 1, cards=EVERY_CARD)[0].chunk_id


@pytest.fixture
def store(sessions: sessionmaker[Session]) -> DatabaseArtifactStore:
    return DatabaseArtifactStore(sessions)


def test_a_pushed_version_reaches_an_empty_replica_whole(
    store: DatabaseArtifactStore, tmp_path: Path
) -> None:
    version = build(tmp_path / "ingest")
    assert push(store, "bm25", tmp_path / "ingest") == version
    replica = tmp_path / "replica"
    assert pull(store, "bm25", replica) == version
    assert current_version(replica) == version  # the same name on every replica
    index = load_bm25(replica)
    assert index.version == version and len(index) == len(TEXTS)
    assert top_id(index, "how do I reprint a label") == "reprint"


def test_pushing_the_stored_version_again_stores_nothing_new(
    store: DatabaseArtifactStore, sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    build(tmp_path / "ingest")
    push(store, "bm25", tmp_path / "ingest")
    push(store, "bm25", tmp_path / "ingest")
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(KBArtifact)) == 1


def test_nothing_published_locally_pushes_nothing(
    store: DatabaseArtifactStore, tmp_path: Path
) -> None:
    assert push(store, "bm25", tmp_path / "empty") is None
    assert store.latest("bm25") is None
    assert pull(store, "bm25", tmp_path / "replica") is None
    assert current_version(tmp_path / "replica") is None


def test_only_the_newest_versions_are_kept_with_their_parts(
    store: DatabaseArtifactStore, sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    versions = []
    for n in range(KEEP_VERSIONS + 2):
        versions.append(build(tmp_path / "ingest", {**TEXTS, f"extra-{n}": f"extra text {n}"}))
        push(store, "bm25", tmp_path / "ingest")
    build(tmp_path / "other")
    push(store, "sentences", tmp_path / "other")  # another artifact keeps its own versions
    with sessions() as session:
        kept = session.scalars(
            select(KBArtifact.version).where(KBArtifact.name == "bm25").order_by(KBArtifact.id)
        ).all()
        orphans = session.scalar(
            select(func.count())
            .select_from(KBArtifactPart)
            .where(KBArtifactPart.artifact_id.not_in(select(KBArtifact.id)))
        )
    assert kept == versions[-KEEP_VERSIONS:] and orphans == 0
    latest = store.latest("bm25")
    assert latest is not None and latest.version == versions[-1]
    assert store.latest("sentences") is not None


def test_a_large_artifact_travels_in_parts(
    store: DatabaseArtifactStore,
    sessions: sessionmaker[Session],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shared_artifacts, "PART_BYTES", 4096)
    texts = {f"card-{i}": f"label {i} refund void reprint carrier {i * 7}" for i in range(300)}
    version = build(tmp_path / "ingest", texts)
    push(store, "bm25", tmp_path / "ingest")
    with sessions() as session:
        parts = session.scalar(select(func.count()).select_from(KBArtifactPart))
    assert parts is not None and parts > 3
    pull(store, "bm25", tmp_path / "replica")
    assert load_bm25(tmp_path / "replica").version == version
    assert top_id(load_bm25(tmp_path / "replica"), "carrier 2093") == "card-299"


def test_a_corrupted_copy_is_refused_and_the_loaded_version_stays(
    store: DatabaseArtifactStore, sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    first = build(tmp_path / "ingest")
    push(store, "bm25", tmp_path / "ingest")
    pull(store, "bm25", tmp_path / "replica")
    build(tmp_path / "ingest", {**TEXTS, "new": "a new card"})
    push(store, "bm25", tmp_path / "ingest")
    with sessions() as session:
        newest = session.scalar(select(func.max(KBArtifact.id)))
        session.execute(
            update(KBArtifactPart)
            .where(KBArtifactPart.artifact_id == newest)
            .values(payload=b"not the bytes that were pushed")
        )
        session.commit()
    with pytest.raises(SharedArtifactError, match="do not match"):
        pull(store, "bm25", tmp_path / "replica")
    assert (tmp_path / "replica" / POINTER).read_text().strip() == first
    assert load_bm25(tmp_path / "replica").version == first
    assert not [p for p in (tmp_path / "replica").iterdir() if p.name.startswith(".tmp")]


def test_a_replica_pulls_the_audiences_with_the_index(
    store: DatabaseArtifactStore, tmp_path: Path
) -> None:
    """The restricted chunks travel with the version: a replica masks them for a member
    outside their audience as the ingesting host does."""
    save_bm25(tmp_path / "ingest", list(TEXTS), list(TEXTS.values()), {"reprint": ["enterprise"]})
    push(store, "bm25", tmp_path / "ingest")
    pull(store, "bm25", tmp_path / "replica")
    index = load_bm25(tmp_path / "replica")
    basic = index.query("how do I reprint a label", 3, cards=CardFilter(frozenset()))
    assert "reprint" not in {h.chunk_id for h in basic}
    member = index.query("how do I reprint a label", 1, cards=CardFilter(frozenset({"enterprise"})))
    assert member[0].chunk_id == "reprint"


def test_a_replica_switches_to_a_new_version_without_a_restart(
    store: DatabaseArtifactStore, tmp_path: Path
) -> None:
    build(tmp_path / "ingest")
    push(store, "bm25", tmp_path / "ingest")
    live = live_artifact("bm25", tmp_path / "replica", load_bm25, store, probe_interval_s=0)
    index, error = live.current()
    assert index is not None and error is None and len(index) == len(TEXTS)

    newer = build(tmp_path / "ingest", {**TEXTS, "customs": "Customs forms for overseas parcels"})
    push(store, "bm25", tmp_path / "ingest")
    index, error = live.current()
    assert index is not None and index.version == newer and error is None
    assert top_id(index, "customs form") == "customs"


def test_a_replica_with_nothing_stored_runs_without_the_artifact_and_says_why(
    store: DatabaseArtifactStore, tmp_path: Path
) -> None:
    live = live_artifact("bm25", tmp_path / "replica", load_bm25, store)
    index, error = live.current()
    assert index is None and error is not None and "no bm25 stored for the replicas" in error


class _Outage:
    """The database's store, until ``down``: then every call fails as a lost database does
    (the failure a replica must ride out)."""

    def __init__(self, store: DatabaseArtifactStore | None = None) -> None:
        self.store = store
        self.down = store is None

    def _check(self) -> DatabaseArtifactStore:
        if self.down or self.store is None:
            raise StorageError("reading the bm25 version failed: connection refused")
        return self.store

    def latest(self, name: str) -> StoredVersion | None:
        return self._check().latest(name)

    def parts(self, name: str, version: str) -> Iterator[bytes]:
        return self._check().parts(name, version)

    def put(self, name: str, stored: StoredVersion, parts: Iterable[bytes]) -> None:
        self._check().put(name, stored, parts)


def test_the_probe_asks_at_most_once_per_interval_and_rides_out_an_outage(
    store: DatabaseArtifactStore, tmp_path: Path
) -> None:
    now = [0.0]
    outage = _Outage(store)
    probe = StoreProbe(outage, "bm25", interval_s=1.0, clock=lambda: now[0])
    assert probe() is None
    version = build(tmp_path / "ingest")
    push(store, "bm25", tmp_path / "ingest")
    now[0] = 0.5
    assert probe() is None  # not asked again yet
    now[0] = 1.0
    assert probe() == version
    outage.down = True
    now[0] = 5.0
    assert probe() == version  # the loaded version stays live


def test_a_pull_during_an_outage_leaves_the_artifact_unavailable_with_the_reason(
    tmp_path: Path,
) -> None:
    live = live_artifact("bm25", tmp_path / "replica", load_bm25, _Outage())
    index, error = live.current()
    assert index is None and error is not None and "cannot copy from the store" in error


def test_only_postgresql_with_a_chroma_server_shares_the_kb(tmp_path: Path) -> None:
    pg = "postgresql+psycopg://127.0.0.1:5432/test"
    chroma = "http://127.0.0.1:8000"
    assert load_settings(data_dir=tmp_path, database_url=pg, chroma_url=chroma).shared_kb
    assert not load_settings(data_dir=tmp_path, database_url=pg, chroma_url=None).shared_kb
    assert not load_settings(data_dir=tmp_path, database_url=None, chroma_url=chroma).shared_kb
    assert shared_store(load_settings(data_dir=tmp_path, database_url=None)) is None
