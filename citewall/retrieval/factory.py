"""Assemble the retriever from settings: the one place backends are chosen, and the one place
the retrieval components' own records (``FusionSettings``, ``RerankSettings``) are built from
``Settings``."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from citewall.config import Settings
from citewall.retrieval.answerability import Thresholds
from citewall.retrieval.calibrated import CalibratedDecider, load_calibration
from citewall.retrieval.calibration import Calibration
from citewall.retrieval.embedder import load_embedder
from citewall.retrieval.kb_embedder import KBEmbedder
from citewall.retrieval.lexical_index import load_bm25
from citewall.retrieval.protocols import Embedder, Reranker
from citewall.retrieval.reloading import ReloadingArtifact
from citewall.retrieval.reranker import RerankSettings, load_reranker
from citewall.retrieval.retriever import FusionSettings, HybridRetriever
from citewall.retrieval.sentence_store import SentenceVectors, load_sentence_vectors
from citewall.retrieval.shared_artifacts import (
    PROBE_INTERVAL_S,
    ArtifactStore,
    StoreProbe,
    shared_loader,
)
from citewall.retrieval.vector_index import ChromaVectorIndex
from citewall.retrieval.versioned_dir import current_version

#: Sentinel: "load the reranker the settings name" (None means "no reranker").
LOAD_FROM_SETTINGS: Any = object()

T = TypeVar("T")


def live_artifact(
    artifact: str,
    directory: Path,
    load: Callable[[Path], T],
    store: ArtifactStore | None,
    *,
    probe_interval_s: float = PROBE_INTERVAL_S,
    **wording: str,
) -> ReloadingArtifact[T]:
    """The artifact ``artifact`` published in ``directory``, reloaded when a new version is
    published: locally (a pointer file) or, with a ``store``, in the store every replica shares
    (copied into ``directory`` first, the store asked at most once per ``probe_interval_s``)."""
    if store is None:
        probe = partial(current_version, directory)
        return ReloadingArtifact(partial(load, directory), probe, **wording)
    return ReloadingArtifact(
        shared_loader(store, artifact, directory, load),
        StoreProbe(store, artifact, interval_s=probe_interval_s),
        **wording,
    )


def fusion_settings(settings: Settings) -> FusionSettings:
    """What the hybrid retriever reads of ``settings``."""
    return FusionSettings(
        dense_top_k=settings.dense_top_k,
        bm25_top_k=settings.bm25_top_k,
        rrf_k=settings.rrf_k,
        rrf_dense_weight=settings.rrf_dense_weight,
        rrf_bm25_weight=settings.rrf_bm25_weight,
        rerank_top_n=settings.rerank_top_n,
        rerank_budget_ms=settings.rerank_budget_ms,
        context_k=settings.context_k,
    )


def rerank_settings(settings: Settings) -> RerankSettings:
    """What loading the cross-encoder reads of ``settings``."""
    return RerankSettings(
        onnx_dir=settings.onnx_dir,
        enabled=settings.reranker_enabled,
        model=settings.reranker_model,
        max_length=settings.reranker_max_length,
        runtime=settings.model_runtime,
        precision=settings.reranker_precision,
        torch_threads=settings.torch_threads,
    )


def open_vector_index(settings: Settings) -> ChromaVectorIndex:
    """The Chroma collection: a server when ``CITEWALL_CHROMA_URL`` is set, else embedded."""
    if settings.chroma_url:
        return ChromaVectorIndex.http(settings.chroma_url, settings.chroma_collection)
    return ChromaVectorIndex.persistent(settings.chroma_dir, settings.chroma_collection)


def kb_embedder(
    settings: Settings, model: Embedder, artifacts: ArtifactStore | None = None
) -> KBEmbedder:
    """``model`` with the sentence vectors ingest published (reloaded when an ingest publishes
    new ones; shared through ``artifacts`` when given)."""
    sentences: ReloadingArtifact[SentenceVectors] = live_artifact(
        "sentences",
        settings.sentences_dir,
        load_sentence_vectors,
        artifacts,
        name="sentence vectors",
        fallback="sentences are embedded per turn",
    )
    return KBEmbedder(model, sentences)


def build_retriever(
    settings: Settings,
    embedder: Embedder | None = None,
    reranker: Reranker | None = LOAD_FROM_SETTINGS,
    *,
    reranker_status: str = "",
    artifacts: ArtifactStore | None = None,
    fusion: FusionSettings | None = None,
) -> HybridRetriever:
    """A ``HybridRetriever`` over the configured Chroma and BM25 artifact (shared through
    ``artifacts`` when given), reading ``fusion`` (default: the settings').

    ``embedder``/``reranker`` are loaded from settings when not given (pass ``reranker=None``
    to run without one). Loading never fails for the reranker; the status line says why.
    """
    if embedder is None:
        embedder = load_embedder(settings)
    if reranker is LOAD_FROM_SETTINGS:
        reranker, reranker_status = load_reranker(rerank_settings(settings))
    elif not reranker_status:
        reranker_status = (
            f"given: {getattr(reranker, 'name', type(reranker).__name__)}"
            if reranker is not None
            else "none given: retrieval runs rrf_only"
        )
    return HybridRetriever(
        fusion or fusion_settings(settings),
        embedder=embedder,
        vector_index=open_vector_index(settings),
        lexical=live_artifact("bm25", settings.bm25_dir, load_bm25, artifacts),
        reranker=reranker,
        reranker_status=reranker_status,
    )


def configured_thresholds(settings: Settings) -> Thresholds:
    """The settings' thresholds (``CITEWALL_ABSTAIN_MIN_DENSE`` / ``_MIN_COVERAGE``): what
    applies when no calibration is stored, and what evaluation compares the calibration with.
    Not the decision itself: ``build_decider`` is."""
    return Thresholds(
        min_dense=settings.abstain_min_dense, min_coverage=settings.abstain_min_coverage
    )


def build_decider(
    settings: Settings, artifacts: ArtifactStore | None = None
) -> CalibratedDecider | None:
    """The abstention decision (None: abstention off): the calibration ingest stored (shared
    through ``artifacts`` when given), the operator's thresholds when set explicitly, else
    the settings' defaults (``retrieval.calibrated``)."""
    if not settings.abstention:
        return None
    configured = configured_thresholds(settings)
    live: ReloadingArtifact[Calibration] | None = None
    if settings.calibration:
        live = live_artifact(
            "calibration",
            settings.calibration_dir,
            load_calibration,
            artifacts,
            name="abstention calibration",
            fallback="the configured thresholds apply",
        )
    return CalibratedDecider(
        live, default=configured, override=configured if settings.abstain_override else None
    )
