"""The in-memory exact index calibration searches: the true top k by cosine, best first."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from citewall.kb.audiences import EVERY_CARD
from citewall.retrieval.exact_index import ExactIndex
from citewall.retrieval.records import ChunkRecord


def _index(n: int, seed: int) -> tuple[ExactIndex, np.ndarray]:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    records = [ChunkRecord(f"c{i}#0", f"c{i}", f"text {i}", {}) for i in range(n)]
    return ExactIndex(records, vectors), vectors


@given(n=st.integers(1, 60), k=st.integers(1, 80), seed=st.integers(0, 10_000))
def test_query_is_the_exact_top_k_best_first(n: int, k: int, seed: int) -> None:
    index, vectors = _index(n, seed)
    query = vectors[seed % n] * 0.5 + vectors[(seed + 1) % n] * 0.5
    hits = index.query(query, k, cards=EVERY_CARD)
    scores = vectors @ query
    assert [h.rank for h in hits] == list(range(1, min(k, n) + 1))
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    expected = np.sort(scores)[::-1][: min(k, n)]
    assert np.allclose([h.score for h in hits], expected)


def test_get_returns_known_records_in_the_order_asked() -> None:
    index, _ = _index(3, 0)
    assert [r.chunk_id for r in index.get(["c2#0", "gone", "c0#0"])] == ["c2#0", "c0#0"]
    assert index.count() == 3


def test_it_is_read_only_and_checks_its_input() -> None:
    index, vectors = _index(2, 0)
    with pytest.raises(TypeError):
        index.delete(["c0#0"])
    with pytest.raises(ValueError, match="2 chunks but 1 vectors"):
        ExactIndex(index.get(["c0#0", "c1#0"]), vectors[:1])


def test_an_empty_index_finds_nothing() -> None:
    empty = ExactIndex([], np.zeros((0, 8), dtype=np.float32))
    assert empty.query(np.ones(8, dtype=np.float32), 5, cards=EVERY_CARD) == []
