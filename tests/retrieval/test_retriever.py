"""The hybrid retriever, with each stage REALLY broken: the label must say what ran."""

from __future__ import annotations

import shutil
from typing import Any

import pytest
from ingest.kbfixtures import CARDS

from citewall.errors import RetrievalError
from citewall.kb.audiences import EVERY_CARD
from citewall.kb.card import Card
from citewall.retrieval.factory import build_retriever
from citewall.retrieval.lexical_index import LexicalIndexError, load_bm25
from citewall.retrieval.retriever import FusionSettings

Q = "how do I reset my password"


def test_full_path_with_real_cross_encoder_fills_every_stage(
    ingested: Any, embedder: Any, minilm_cross_encoder: Any
) -> None:
    """The full path with the real (untrained-head) CrossEncoder: labels, logits, metadata.

    The budget is generous here (the machine is shared); budget behaviour has its own test.
    """
    generous = FusionSettings(rerank_budget_ms=120_000)
    retriever = build_retriever(
        ingested, embedder=embedder, reranker=minilm_cross_encoder, fusion=generous
    )
    ctx = retriever.retrieve(Q, k=4, cards=EVERY_CARD)
    assert ctx.hybrid_path == "full" and not ctx.rerank_over_budget, ctx.notes
    assert len(ctx.chunks) == 4 and len({c.id for c in ctx.chunks}) == 4
    assert set(ctx.timings_ms) == {"embed", "dense", "bm25", "fuse", "rerank", "total"}
    assert ctx.timings_ms["rerank"] > 0
    logits = [c.rerank_logit for c in ctx.chunks]
    assert all(isinstance(x, float) for x in logits)
    assert logits == sorted(logits, reverse=True)  # type: ignore[type-var]
    assert [c.rerank_rank for c in ctx.chunks] == [1, 2, 3, 4]
    assert [c.rank for c in ctx.chunks] == [1, 2, 3, 4]
    # Raw logits, not sigmoid probabilities: they match the model called with Identity.
    direct = minilm_cross_encoder.score(Q, [f"{ctx.chunks[0].title}\n{ctx.chunks[0].text}"])
    assert direct[0] == pytest.approx(logits[0], abs=1e-4)
    for c in ctx.chunks:
        assert c.rrf_rank is not None and c.rrf_score is not None and c.dense_score is not None
        card = Card.model_validate(next(x for x in CARDS if x["id"] == c.id))
        assert c.metadata == card.full_metadata() and c.title == card.title
        assert c.source == card.url and c.chunk_id.startswith(f"{c.id}#")


def test_rrf_only_when_reranker_absent(ingested: Any, embedder: Any) -> None:
    retriever = build_retriever(ingested, embedder=embedder, reranker=None)
    ctx = retriever.retrieve(Q, cards=EVERY_CARD)
    assert ctx.hybrid_path == "rrf_only"
    assert ctx.chunks[0].id == "password-reset"
    assert ctx.chunks[0].dense_rank == 1 and ctx.chunks[0].bm25_rank == 1
    assert all(c.rerank_logit is None for c in ctx.chunks)
    assert retriever.status()["reranker"]["loaded"] is False


def test_rrf_only_when_reranker_raises(
    ingested: Any, embedder: Any, broken_cross_encoder: Any
) -> None:
    retriever = build_retriever(ingested, embedder=embedder, reranker=broken_cross_encoder)
    fused = build_retriever(ingested, embedder=embedder, reranker=None).retrieve(
        Q, cards=EVERY_CARD
    )
    ctx = retriever.retrieve(Q, cards=EVERY_CARD)
    assert ctx.hybrid_path == "rrf_only" and not ctx.rerank_over_budget
    assert [c.id for c in ctx.chunks] == [c.id for c in fused.chunks]
    assert all(c.rerank_logit is None and c.rerank_rank is None for c in ctx.chunks)
    assert any("reranker failed" in n and "meta tensors" in n for n in ctx.notes), ctx.notes


def test_rrf_only_when_reranker_over_budget(
    ingested: Any, embedder: Any, minilm_cross_encoder: Any
) -> None:
    tight = FusionSettings(rerank_budget_ms=1)
    retriever = build_retriever(
        ingested, embedder=embedder, reranker=minilm_cross_encoder, fusion=tight
    )
    fused = build_retriever(ingested, embedder=embedder, reranker=None, fusion=tight).retrieve(
        Q, cards=EVERY_CARD
    )
    ctx = retriever.retrieve(Q, cards=EVERY_CARD)
    assert ctx.hybrid_path == "rrf_only" and ctx.rerank_over_budget
    assert ctx.timings_ms["rerank"] > 1
    assert all(c.rerank_logit is None for c in ctx.chunks)  # scores discarded
    assert [c.id for c in ctx.chunks] == [c.id for c in fused.chunks]
    assert any("over budget" in n for n in ctx.notes)
    # The measured cost now predicts an overrun: the next call skips the work up front.
    again = retriever.retrieve(Q, cards=EVERY_CARD)
    assert again.hybrid_path == "rrf_only" and again.rerank_over_budget
    assert again.timings_ms["rerank"] == 0.0
    assert any("reranker skipped: estimated" in n for n in again.notes)


@pytest.mark.parametrize("damage", ["delete_dir", "truncate_array", "garbage_pointer"])
def test_dense_only_when_bm25_missing_or_corrupt(
    ingested: Any, embedder: Any, minilm_cross_encoder: Any, damage: str
) -> None:
    bm25 = ingested.bm25_dir
    live = bm25 / (bm25 / "CURRENT").read_text().strip()
    if damage == "delete_dir":
        shutil.rmtree(bm25)
    elif damage == "truncate_array":
        (live / "data.csc.index.npy").write_bytes(b"\x93NUMPY garbage")
    else:
        (bm25 / "CURRENT").write_text("v-does-not-exist\n")
    with pytest.raises(LexicalIndexError, match=str(bm25)):
        load_bm25(bm25)
    retriever = build_retriever(ingested, embedder=embedder, reranker=minilm_cross_encoder)
    ctx = retriever.retrieve(Q, cards=EVERY_CARD)
    assert ctx.hybrid_path == "dense_only"
    assert ctx.chunks[0].id == "password-reset"
    assert all(c.bm25_rank is None and c.rrf_score is None for c in ctx.chunks)
    assert all(c.rerank_logit is None for c in ctx.chunks)  # documented: no rerank here
    status = retriever.status()["lexical_index"]
    assert status["ok"] is False and str(bm25) in status["error"]


def test_reload_picks_up_a_new_bm25_artifact(ingested: Any, embedder: Any) -> None:
    from citewall.ingest.pipeline import rebuild_lexical
    from citewall.retrieval.factory import open_vector_index

    shutil.rmtree(ingested.bm25_dir)
    retriever = build_retriever(ingested, embedder=embedder, reranker=None)
    assert retriever.retrieve(Q, cards=EVERY_CARD).hybrid_path == "dense_only"
    rebuild_lexical(ingested, open_vector_index(ingested).all_chunks()[0])
    # No explicit reload(): the retriever notices the new live version by itself.
    assert retriever.retrieve(Q, cards=EVERY_CARD).hybrid_path == "rrf_only"
    assert retriever.status()["lexical_index"]["chunks"] == len(CARDS)


def test_empty_kb_gives_no_path_and_no_chunks(
    settings: Any, embedder: Any, broken_cross_encoder: Any
) -> None:
    # The broken reranker would say "reranker failed" if an empty KB reached it.
    retriever = build_retriever(settings, embedder=embedder, reranker=broken_cross_encoder)
    ctx = retriever.retrieve(Q, cards=EVERY_CARD)
    assert ctx.hybrid_path is None and ctx.chunks == []
    assert ctx.notes == ["knowledge base is empty: nothing retrieved"]
    assert retriever.status()["vector_store"]["count"] == 0


def test_vector_store_failure_raises_retrieval_error(ingested: Any, embedder: Any) -> None:
    retriever = build_retriever(ingested, embedder=embedder, reranker=None)
    client = retriever.vector_index._client  # type: ignore[attr-defined]
    client.delete_collection(ingested.chroma_collection)  # the store loses its data under us
    with pytest.raises(RetrievalError, match="Chroma"):
        retriever.retrieve(Q, cards=EVERY_CARD)
