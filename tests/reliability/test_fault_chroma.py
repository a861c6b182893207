"""Fault: the Chroma server is killed (SIGKILL) mid-run, then comes back.

While it is down, chat answers a clear 503 (the stream an ``error`` event), /readyz says the
vector store is down, nothing is stored; when it is back, the same citewall process serves
again without a restart.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .rig import QUESTIONS, Rig, build_rig, table_counts, turn_integrity_problems
from .services import ChromaServer
from .sse import sse_events

RETRIEVAL_DOWN = "retrieval is unavailable; please retry"


@pytest.fixture
def chroma(tmp_path: Path) -> Iterator[ChromaServer]:
    server = ChromaServer(tmp_path / "chroma").start()
    yield server
    server.stop()


@pytest.fixture
def rig(rig_dir: Path, embedder: Any, chroma: ChromaServer) -> Iterator[Rig]:
    rig = build_rig(rig_dir, embedder, chroma_url=chroma.url)
    yield rig
    rig.close()


def test_chroma_killed_mid_run_gives_503_and_recovers(rig: Rig, chroma: ChromaServer) -> None:
    ok = rig.chat(QUESTIONS[0])
    assert ok.status_code == 200 and ok.json()["hybrid_path"] == "rrf_only", ok.text
    assert rig.client.get("/readyz").status_code == 200
    before = table_counts(rig.runtime.engine)

    chroma.kill()

    for question in QUESTIONS[:2]:
        r = rig.chat(question)
        assert r.status_code == 503, r.text
        assert r.json() == {"detail": RETRIEVAL_DOWN}
    s = rig.stream(QUESTIONS[1])
    assert s.status_code == 200
    events = sse_events(s.text)
    assert [e for e, _ in events] == ["meta", "error"], events
    assert events[-1][1] == {"detail": RETRIEVAL_DOWN}
    ready = rig.client.get("/readyz", headers=rig.auth("admin"))
    assert ready.status_code == 503, ready.text
    assert ready.json()["checks"]["retrieval"]["vector_store"]["ok"] is False
    assert table_counts(rig.runtime.engine) == before, "a failed turn left rows behind"
    metrics = rig.client.get("/metrics").text
    assert 'citewall_chat_errors_total{kind="RetrievalError"} 3.0' in metrics

    chroma.start()  # same port, same path: the collection is still there

    again = rig.chat(QUESTIONS[1])
    assert again.status_code == 200, again.text
    assert again.json()["hybrid_path"] == "rrf_only"
    assert rig.client.get("/readyz").status_code == 200
    assert turn_integrity_problems(rig.runtime.engine) == []
    assert table_counts(rig.runtime.engine)["messages"] == before["messages"] + 2
