"""The live lexical index: loaded once, reloaded when the published version moves, and never
raising for a missing or broken artifact (the retriever then runs dense_only)."""

from __future__ import annotations

from dataclasses import dataclass

from citewall.retrieval.lexical_index import LexicalIndexError
from citewall.retrieval.records import Hit
from citewall.retrieval.reloading import ReloadingArtifact


@dataclass
class _Index:
    version: str

    def query(self, text: str, k: int) -> list[Hit]:
        return []

    def __len__(self) -> int:
        return 0


def test_reloads_only_when_the_published_version_changes() -> None:
    published = ["v1"]
    loads: list[str] = []

    def load() -> _Index:
        loads.append(published[0])
        return _Index(published[0])

    handle = ReloadingArtifact(load, lambda: published[0])
    for _ in range(3):
        index, error = handle.current()
    assert index is not None and index.version == "v1" and error is None
    assert loads == ["v1"]
    published[0] = "v2"
    index, _ = handle.current()
    assert index is not None and index.version == "v2" and loads == ["v1", "v2"]


def test_a_missing_or_failing_artifact_is_a_reason_not_an_exception() -> None:
    def missing() -> _Index:
        raise LexicalIndexError("no BM25 index at /x (missing CURRENT); run ingest")

    def broken() -> _Index:
        raise OSError("disk gone")

    assert ReloadingArtifact(missing).current() == (
        None,
        "no BM25 index at /x (missing CURRENT); run ingest",
    )
    index, error = ReloadingArtifact(broken).current()
    assert index is None and error == "BM25 index failed to load: OSError: disk gone"
