"""The side-by-side bench (benchmarks/compare.py) still builds and runs, on a tiny corpus.

Real components: the packaged MiniLM through citewall's embedder and through LangChain's
wrapper, and ``CrossEncoder(<packaged MiniLM>, num_labels=1)`` on both sides (a real
transformer with an UNTRAINED head: these tests check that the pipelines run and return the
right shapes and labels, not ranking quality). Needs the ``bench`` extra; skipped without it.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
pytest.importorskip(
    "langchain_classic", reason="the bench extra is not installed: pip install -e '.[bench]'"
)
pytest.importorskip("rank_bm25", reason="the bench extra is not installed")
pytest.importorskip("matplotlib", reason="the bench extra is not installed")
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks import compare  # noqa: E402
from benchmarks.baselines.langchain_pipeline import (  # noqa: E402
    RERANK_TOP_N,
    Passage,
    build_pipeline,
    card_ranking,
    load_models,
)

DEMO = REPO / "kb" / "demo" / "cards.jsonl"


@pytest.fixture(scope="module")
def lc_models(embedder: Any) -> Any:
    from citewall.retrieval.embedder import default_embedding_model_path

    return load_models(default_embedding_model_path(), max_length=128)


@pytest.fixture(scope="module")
def cw_reranker() -> Any:
    from citewall.retrieval.embedder import default_embedding_model_path
    from citewall.retrieval.reranker import CrossEncoderReranker, build_cross_encoder

    model = build_cross_encoder(default_embedding_model_path(), max_length=128, local_only=True)
    return CrossEncoderReranker(model, name="minilm-untrained-head")


@pytest.fixture(scope="module")
def demo_cards() -> list[Any]:
    from citewall.ingest.loaders import load_cards

    return load_cards([DEMO]).cards[:40]


def test_langchain_pipeline_finds_a_card_by_its_own_words(
    tmp_path: Path, lc_models: Any, demo_cards: list[Any]
) -> None:
    from citewall.ingest.chunking import chunk_card
    from citewall.retrieval.records import index_text

    records = [r for c in demo_cards for r in chunk_card(c, 180)]
    passages = [Passage(r.chunk_id, r.parent_id, index_text(r)) for r in records]
    lc = build_pipeline(passages, lc_models, tmp_path / "lc")
    assert lc.vectorstore._collection.count() == len(passages)

    target = demo_cards[7]
    ranked = card_ranking(lc.ensemble.invoke(target.title))
    assert target.id in ranked[:3], (target.id, ranked)
    assert len(ranked) == len(set(ranked))  # one entry per card

    reranked = lc.reranked.invoke(target.title)
    assert 0 < len(reranked) <= RERANK_TOP_N
    assert all(d.metadata["parent_id"] for d in reranked)


def test_compare_latency_row_and_chart(
    tmp_path: Path,
    settings: Any,
    embedder: Any,
    cw_reranker: Any,
    lc_models: Any,
    demo_cards: list[Any],
) -> None:
    from citewall.retrieval.records import index_text
    from citewall_evals.bench.corpus import chunk_records, synthetic_cards

    queries = [
        json.loads(line)["question"]
        for line in (REPO / "kb/eval/questions.test.jsonl").read_text().splitlines()[:2]
    ]
    pool = embedder.embed_documents(
        [index_text(r) for r in chunk_records(synthetic_cards(demo_cards, 40))]
    )
    row = compare.latency_at(
        80,  # twice the real pool: exercises the noisy-copy path too
        fusion=replace(compare.bench_fusion(settings), rerank_top_n=8),
        demo=demo_cards,
        queries=queries,
        rerank_queries=queries[:1],
        embedder=embedder,
        reranker=cw_reranker,
        models=lc_models,
        pool=pool,
    )
    assert row["chunks"] == 80
    for name in (compare.CW_RRF, compare.CW_FULL, compare.LC_ENS, compare.LC_RR):
        stats = row["latency_ms"][name]
        assert 0 < stats["p50"] <= stats["p95"], (name, stats)
    assert row["latency_ms"][compare.CW_RRF]["n"] == len(queries)
    assert row["latency_ms"][compare.LC_RR]["n"] == 1

    result = {"sizes": [row, {**row, "chunks": 160}]}
    png = tmp_path / "chart.png"
    compare.chart(result, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
