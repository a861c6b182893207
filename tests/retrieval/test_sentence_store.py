"""The sentence-vector artifact: exact lookups by text, published atomically, refused when bad."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.retrieval.kb_embedder import KBEmbedder
from citewall.retrieval.reloading import ReloadingArtifact
from citewall.retrieval.sentence_store import (
    SentenceStoreError,
    SentenceVectors,
    load_sentence_vectors,
    save_sentence_vectors,
    sentence_key,
)
from citewall.retrieval.versioned_dir import current_version


class _CountingModel:
    """A model stand-in that must not be reached for stored units: counts what it embeds."""

    dimension = 3

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.embedded.extend(texts)
        return np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float32).reshape(-1, 3)


def _vec(i: int) -> list[float]:
    return [float(i), float(i) / 2, -1.0]


@settings(max_examples=examples(100), deadline=None)
@given(
    stored=st.lists(st.text(max_size=30), unique=True, max_size=40),
    asked=st.lists(st.text(max_size=30), max_size=20),
)
def test_lookup_finds_exactly_the_stored_texts(
    tmp_path_factory: pytest.TempPathFactory, stored: list[str], asked: list[str]
) -> None:
    directory = tmp_path_factory.mktemp("sentences")
    vectors = np.array([_vec(i) for i in range(len(stored))], dtype=np.float32).reshape(-1, 3)
    save_sentence_vectors(directory, [sentence_key(t) for t in stored], vectors)
    store = load_sentence_vectors(directory)
    queries = asked + stored
    got, found = store.lookup(queries)
    for row, text in enumerate(queries):
        assert bool(found[row]) == (text in stored)
        expected = _vec(stored.index(text)) if text in stored else [0.0, 0.0, 0.0]
        assert got[row].tolist() == expected


def test_a_new_version_replaces_the_old_and_a_broken_one_is_refused(tmp_path: Path) -> None:
    first = save_sentence_vectors(tmp_path, [sentence_key("a")], np.ones((1, 3), np.float32))
    second = save_sentence_vectors(tmp_path, [sentence_key("b")], np.ones((1, 3), np.float32))
    assert current_version(tmp_path) == second != first
    assert (tmp_path / first).exists()  # a reader that read the old pointer still finds it
    third = save_sentence_vectors(tmp_path, [sentence_key("b")], np.ones((1, 3), np.float32))
    assert current_version(tmp_path) == third and not (tmp_path / first).exists()
    assert load_sentence_vectors(tmp_path).lookup(["a", "b"])[1].tolist() == [False, True]
    (tmp_path / third / "vectors.npy").write_bytes(b"not an array")
    with pytest.raises(SentenceStoreError, match="unreadable"):
        load_sentence_vectors(tmp_path)
    with pytest.raises(SentenceStoreError, match="run ingest"):
        load_sentence_vectors(tmp_path / "missing")


def test_the_embedder_reads_stored_units_and_embeds_only_the_rest(tmp_path: Path) -> None:
    save_sentence_vectors(
        tmp_path,
        [sentence_key("stored one"), sentence_key("stored two")],
        np.array([_vec(1), _vec(2)], dtype=np.float32),
    )
    model = _CountingModel()
    handle: ReloadingArtifact[SentenceVectors] = ReloadingArtifact(
        lambda: load_sentence_vectors(tmp_path), lambda: current_version(tmp_path)
    )
    kb = KBEmbedder(model, handle)
    got = kb.embed_sentences(["stored two", "new", "stored one"])
    assert model.embedded == ["new"]
    assert got.tolist() == [_vec(2), [3.0, 1.0, 0.0], _vec(1)]
    assert (kb.stored, kb.embedded) == (2, 1)
    assert kb.status()["ok"] and kb.status()["count"] == 2
    # The question is embedded once, then remembered.
    kb.embed_query("q?")
    kb.embed_query("q?")
    assert model.embedded == ["new", "q?"]


def test_a_store_of_another_dimension_is_not_used(tmp_path: Path) -> None:
    save_sentence_vectors(tmp_path, [sentence_key("x")], np.ones((1, 5), np.float32))
    model = _CountingModel()
    kb = KBEmbedder(
        model, ReloadingArtifact(lambda: load_sentence_vectors(tmp_path), name="sentence vectors")
    )
    kb.embed_sentences(["x"])
    assert model.embedded == ["x"]
    status = kb.status()
    assert not status["ok"] and "dimension 5" in status["error"]
