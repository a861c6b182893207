"""Chroma server mode: a real ``chroma run`` on loopback, reached through CITEWALL_CHROMA_URL."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ingest.kbfixtures import CARDS, write_jsonl

from citewall.ingest.pipeline import ingest_paths
from citewall.kb.audiences import EVERY_CARD
from citewall.retrieval.factory import build_retriever
from citewall_evals.bench.server import free_port


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    exe = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    proc = subprocess.Popen(
        [exe, "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(tmp_path / "c")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if httpx.get(f"{url}/api/v2/heartbeat", timeout=0.5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.05)
        else:
            pytest.fail("chroma run did not become ready in 10 s")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_ingest_and_retrieve_through_a_chroma_server(
    chroma_server: str, tmp_path: Path, settings: Any, embedder: Any
) -> None:
    s = settings.model_copy(update={"chroma_url": chroma_server})
    report = ingest_paths(
        [write_jsonl(tmp_path / "kb.jsonl", CARDS)], s, embedder=embedder, progress=False
    )
    assert report.added == len(CARDS)
    assert not s.chroma_dir.exists()  # nothing went to the embedded store
    retriever = build_retriever(s, embedder=embedder, reranker=None)
    assert retriever.status()["vector_store"]["count"] == len(CARDS)
    ctx = retriever.retrieve("customs form for an international parcel", cards=EVERY_CARD)
    assert ctx.hybrid_path == "rrf_only" and ctx.chunks[0].id == "customs-forms"
    assert ctx.chunks[0].source == "https://help.example.com/customs"
