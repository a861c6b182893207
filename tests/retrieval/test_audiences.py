"""Audiences filter every retrieval path before ranking: dense (embedded and server Chroma),
BM25, the composed retriever and the exact index calibration searches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ingest.kbfixtures import CARDS, write_jsonl

from citewall.ingest.pipeline import ingest_paths
from citewall.kb.audiences import EVERY_CARD, CardFilter, Viewer, retrievable_for
from citewall.retrieval.exact_index import ExactIndex
from citewall.retrieval.factory import build_retriever
from citewall.retrieval.lexical_index import load_bm25, save_bm25
from citewall.retrieval.records import ChunkRecord
from citewall.retrieval.vector_index import ChromaVectorIndex, stored_audiences

from .test_chroma_server import chroma_server  # noqa: F401 (a fixture used below)

QUESTION = "how do I set up single sign-on with SAML"
RESTRICTED: list[dict[str, Any]] = [
    {
        "id": "sso-enterprise",
        "title": "Single sign-on with SAML",
        "body": "Set up SAML single sign-on under Settings > Security: upload the identity "
        "provider metadata and map the email attribute.",
        "url": "https://help.example.com/sso",
        "audiences": ["enterprise"],
    },
    {
        "id": "sso-partner-playbook",
        "title": "Partner SAML single sign-on playbook",
        "body": "Partners get SAML single sign-on set up by the partner desk; check the "
        "identity provider metadata before the call.",
        "audiences": ["partners", "beta"],
    },
]
MEMBERS = {
    "no group": (Viewer.member([]), set()),
    "enterprise": (Viewer.member(["enterprise"]), {"sso-enterprise"}),
    "beta": (Viewer.member(["beta"]), {"sso-partner-playbook"}),
    "several": (
        Viewer.member(["enterprise", "partners"]),
        {"sso-enterprise", "sso-partner-playbook"},
    ),
    "staff": (Viewer.staff(), {"sso-enterprise", "sso-partner-playbook"}),
}
HIDDEN = {c["id"] for c in RESTRICTED}


def _ingest(tmp_path: Path, settings: Any, embedder: Any) -> Any:
    report = ingest_paths(
        [write_jsonl(tmp_path / "kb.jsonl", CARDS + RESTRICTED)],
        settings,
        embedder=embedder,
        progress=False,
    )
    assert report.added == len(CARDS) + len(RESTRICTED), report.errors
    return settings


@pytest.fixture
def restricted_kb(tmp_path: Path, settings: Any, embedder: Any) -> Any:
    return _ingest(tmp_path, settings, embedder)


@pytest.mark.parametrize("who", sorted(MEMBERS))
def test_every_stage_sees_only_the_cards_the_viewer_may_retrieve(
    restricted_kb: Any, embedder: Any, who: str
) -> None:
    viewer, allowed = MEMBERS[who]
    cards = retrievable_for(viewer)
    retriever = build_retriever(restricted_kb, embedder=embedder, reranker=None)
    dense = {
        h.chunk_id.split("#")[0] for h in retriever.dense(retriever.embed(QUESTION), cards=cards)
    }
    lexical, problem = retriever.lexical_hits(QUESTION, cards=cards)
    assert problem is None
    found = {h.chunk_id.split("#")[0] for h in lexical}
    ctx = retriever.retrieve(QUESTION, k=10, cards=cards)
    got = {c.id for c in ctx.chunks}
    for stage in (dense, found, got):
        assert stage & HIDDEN == allowed
    # Every unrestricted card is still a candidate for everyone.
    assert len(dense - HIDDEN) == len(CARDS)
    if allowed:
        assert ctx.chunks[0].id in allowed  # the card the question is about, when visible


def test_visible_cards_rank_as_they_do_for_staff(restricted_kb: Any, embedder: Any) -> None:
    """A member inside no audience gets the staff ranking with the hidden cards taken out."""
    retriever = build_retriever(restricted_kb, embedder=embedder, reranker=None)
    for question in (QUESTION, "refund on an annual plan", "reset my password"):
        staff = [c.id for c in retriever.retrieve(question, k=10, cards=EVERY_CARD).chunks]
        member = [
            c.id for c in retriever.retrieve(question, k=10, cards=retrievable_for(Viewer())).chunks
        ]
        assert member == [c for c in staff if c not in HIDDEN][: len(member)]


def test_a_chroma_server_filters_the_same_way(
    chroma_server: str,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
    settings: Any,
    embedder: Any,
) -> None:
    s = _ingest(tmp_path, settings.model_copy(update={"chroma_url": chroma_server}), embedder)
    retriever = build_retriever(s, embedder=embedder, reranker=None)
    for viewer, allowed in MEMBERS.values():
        ctx = retriever.retrieve(QUESTION, k=10, cards=retrievable_for(viewer))
        assert {c.id for c in ctx.chunks} & HIDDEN == allowed


def test_a_chunk_written_before_audiences_is_for_everyone(tmp_path: Path) -> None:
    """A chunk stored without the ``restricted`` key (an index from before audiences) passes
    the member filter: ``$ne`` matches a missing key."""
    index = ChromaVectorIndex.persistent(tmp_path / "chroma", "old")
    vec = np.ones((1, 8), dtype=np.float32) / np.sqrt(8)
    index._collection.upsert(ids=["old#0"], embeddings=vec, metadatas=[{"parent_id": "old"}])
    hits = index.query(vec[0], 5, cards=CardFilter(frozenset()))
    assert [h.chunk_id for h in hits] == ["old#0"]


def test_bm25_masks_restricted_chunks_before_the_top_k(tmp_path: Path) -> None:
    texts = ["saml sign-on secret", "saml sign-on", "refund policy"]
    ids = ["hidden#0", "open#0", "other#0"]
    save_bm25(tmp_path / "bm25", ids, texts, {"hidden#0": ["enterprise"]})
    index = load_bm25(tmp_path / "bm25")
    member = [h.chunk_id for h in index.query("saml secret", 1, cards=CardFilter(frozenset()))]
    assert member == ["open#0"]  # the hidden chunk does not take the one slot
    staff = [h.chunk_id for h in index.query("saml secret", 1, cards=EVERY_CARD)]
    assert staff == ["hidden#0"]


def test_the_exact_index_filters_too() -> None:
    records = [
        ChunkRecord("a#0", "a", "a", {}, audiences=("enterprise",)),
        ChunkRecord("b#0", "b", "b", {}),
    ]
    vectors = np.eye(2, dtype=np.float32)
    index = ExactIndex(records, vectors)
    assert [h.chunk_id for h in index.query(vectors[0], 2, cards=CardFilter(frozenset()))] == [
        "b#0"
    ]
    assert len(index.query(vectors[0], 2, cards=EVERY_CARD)) == 2


def test_hidden_chunks_crowding_the_head_still_leave_k_allowed_ones(tmp_path: Path) -> None:
    """When the wider search holds fewer than k allowed chunks, the ``where`` search finds the
    nearest allowed ones all the same (and never a hidden one)."""
    index = ChromaVectorIndex.persistent(tmp_path / "chroma", "crowded")
    rng = np.random.default_rng(3)
    query = np.zeros(16, dtype=np.float32)
    query[0] = 1.0
    near = query + rng.normal(0, 0.01, (40, 16)).astype(np.float32)
    far = rng.normal(0, 1, (10, 16)).astype(np.float32)
    vectors = np.concatenate([near, far])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    records = [
        ChunkRecord(f"h{i}#0", f"h{i}", "hidden", {}, audiences=("enterprise",)) for i in range(40)
    ] + [ChunkRecord(f"v{i}#0", f"v{i}", "open", {}) for i in range(10)]
    index.upsert(records, vectors.astype(np.float32))
    member = index.query(query, 5, cards=CardFilter(frozenset()))
    assert len(member) == 5 and all(h.chunk_id.startswith("v") for h in member)
    exact = sorted(range(40, 50), key=lambda i: -float(vectors[i] @ query))[:5]
    assert [h.chunk_id for h in member] == [records[i].chunk_id for i in exact]
    enterprise = index.query(query, 5, cards=CardFilter(frozenset({"enterprise"})))
    assert all(h.chunk_id.startswith("h") for h in enterprise)


def _relabelled(index: ChromaVectorIndex) -> None:
    """A card written for ``enterprise``, then rewritten for ``beta``: an enterprise member no
    longer retrieves it, a beta member does, and its stored audiences are ``beta`` alone."""
    vec = np.ones((1, 8), dtype=np.float32) / np.sqrt(8)
    index.upsert([ChunkRecord("moved#0", "moved", "text", {}, audiences=("enterprise",))], vec)
    index.upsert([ChunkRecord("moved#0", "moved", "text", {}, audiences=("beta",))], vec)
    enterprise = index.query(vec[0], 5, cards=CardFilter(frozenset({"enterprise"})))
    assert enterprise == []
    beta = index.query(vec[0], 5, cards=CardFilter(frozenset({"beta"})))
    assert [h.chunk_id for h in beta] == ["moved#0"]
    stored = index._collection.get(ids=["moved#0"], include=["metadatas"])["metadatas"]
    assert stored_audiences(stored[0]) == ("beta",)
    index.upsert([ChunkRecord("moved#0", "moved", "text", {})], vec)  # open to every member
    assert [h.chunk_id for h in index.query(vec[0], 5, cards=CardFilter(frozenset()))] == [
        "moved#0"
    ]


def test_a_card_moved_to_another_audience_leaves_the_one_it_had(tmp_path: Path) -> None:
    _relabelled(ChromaVectorIndex.persistent(tmp_path / "chroma", "moved"))


def test_a_chroma_server_forgets_the_audience_a_card_left(
    chroma_server: str,  # noqa: F811 (the fixture imported above)
) -> None:
    _relabelled(ChromaVectorIndex.http(chroma_server, "moved"))
