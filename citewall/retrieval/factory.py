"""Assemble the retriever from settings: the one place backends are chosen."""

from __future__ import annotations

from functools import partial
from typing import Any

from citewall.config import Settings
from citewall.retrieval.embedder import load_embedder
from citewall.retrieval.kb_embedder import KBEmbedder
from citewall.retrieval.lexical_index import load_bm25
from citewall.retrieval.protocols import Embedder, Reranker
from citewall.retrieval.reloading import ReloadingArtifact
from citewall.retrieval.reranker import load_reranker
from citewall.retrieval.retriever import HybridRetriever
from citewall.retrieval.sentence_store import SentenceVectors, load_sentence_vectors
from citewall.retrieval.vector_index import ChromaVectorIndex
from citewall.retrieval.versioned_dir import current_version

#: Sentinel: "load the reranker the settings name" (None means "no reranker").
LOAD_FROM_SETTINGS: Any = object()


def open_vector_index(settings: Settings) -> ChromaVectorIndex:
    """The Chroma collection: a server when ``CITEWALL_CHROMA_URL`` is set, else embedded."""
    if settings.chroma_url:
        return ChromaVectorIndex.http(settings.chroma_url, settings.chroma_collection)
    return ChromaVectorIndex.persistent(settings.chroma_dir, settings.chroma_collection)


def kb_embedder(settings: Settings, model: Embedder) -> KBEmbedder:
    """``model`` with the sentence vectors ingest published (reloaded when an ingest publishes
    new ones)."""
    sentences: ReloadingArtifact[SentenceVectors] = ReloadingArtifact(
        partial(load_sentence_vectors, settings.sentences_dir),
        partial(current_version, settings.sentences_dir),
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
) -> HybridRetriever:
    """A ``HybridRetriever`` over the configured Chroma and BM25 artifact.

    ``embedder``/``reranker`` are loaded from settings when not given (pass ``reranker=None``
    to run without one). Loading never fails for the reranker; the status line says why.
    """
    if embedder is None:
        embedder = load_embedder(settings)
    if reranker is LOAD_FROM_SETTINGS:
        reranker, reranker_status = load_reranker(settings)
    elif not reranker_status:
        reranker_status = (
            f"given: {getattr(reranker, 'name', type(reranker).__name__)}"
            if reranker is not None
            else "none given: retrieval runs rrf_only"
        )
    return HybridRetriever(
        settings,
        embedder=embedder,
        vector_index=open_vector_index(settings),
        lexical=ReloadingArtifact(
            partial(load_bm25, settings.bm25_dir), partial(current_version, settings.bm25_dir)
        ),
        reranker=reranker,
        reranker_status=reranker_status,
    )
