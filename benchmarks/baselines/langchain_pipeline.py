"""The LangChain 1.x pipeline a team would assemble instead of citewall.

BM25Retriever (rank_bm25, LangChain's default whitespace tokeniser: no lower-casing, no
stemming) + a Chroma vector store (langchain-chroma, its default collection settings), fused by
``EnsembleRetriever`` (weighted RRF, c=60, equal weights), then ``CrossEncoderReranker`` over a
``HuggingFaceCrossEncoder`` inside a ``ContextualCompressionRetriever``.

Same models as citewall: the packaged all-MiniLM-L6-v2 through LangChain's sentence-transformers
embeddings wrapper, and ``CrossEncoder(<that path>, num_labels=1)`` as the cross-encoder: a real
transformer with real logits and an UNTRAINED head, so its ranking quality means nothing; only
its cost is comparable. Everything loads offline (``HF_HUB_OFFLINE=1``).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

#: Candidates per retriever: the ensemble's union (<= 20) is what gets reranked, close to
#: citewall's ``rerank_top_n`` = 20.
PER_RETRIEVER_K = 10
#: Documents the reranker keeps (nDCG@10 needs ten).
RERANK_TOP_N = 10


@dataclass(frozen=True, slots=True)
class Passage:
    """One chunk as the baseline sees it: the same text citewall embeds and BM25-indexes."""

    chunk_id: str
    parent_id: str
    text: str


@dataclass(slots=True)
class LangChainModels:
    """The two models, loaded once per process through LangChain's own wrappers."""

    embeddings: Any
    cross_encoder: Any


@dataclass(slots=True)
class LangChainPipeline:
    """``dense`` = Chroma alone; ``ensemble`` = BM25 + Chroma fused; ``reranked`` = ensemble +
    cross-encoder rerank."""

    dense: Any
    ensemble: Any
    reranked: Any
    vectorstore: Any
    bm25: Any


def _quiet_imports() -> None:
    # langchain-community prints a sunset DeprecationWarning on import; the bench output
    # should show figures, not that.
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"langchain.*")
    warnings.filterwarnings("ignore", message=r".*langchain-community.*")


def load_models(model_path: str, *, max_length: int = 256) -> LangChainModels:
    """The packaged MiniLM as LangChain embeddings and as an (untrained-head) cross-encoder."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    _quiet_imports()
    from langchain_community.cross_encoders import HuggingFaceCrossEncoder
    from langchain_community.embeddings import HuggingFaceEmbeddings

    embeddings = HuggingFaceEmbeddings(
        model_name=model_path,
        model_kwargs={"device": "cpu"},
        encode_kwargs={"normalize_embeddings": True},
    )
    cross_encoder = HuggingFaceCrossEncoder(
        model_name=model_path,
        model_kwargs={"device": "cpu", "num_labels": 1, "max_length": max_length},
    )
    # torch's first forward pass is several times slower; citewall's reranker warms up too.
    cross_encoder.score([("warm up", "a short passage to warm up the cross-encoder")] * 2)
    embeddings.embed_query("warm up")
    return LangChainModels(embeddings=embeddings, cross_encoder=cross_encoder)


def _documents(passages: Sequence[Passage]) -> list[Any]:
    from langchain_core.documents import Document

    return [
        Document(
            page_content=p.text,
            metadata={"chunk_id": p.chunk_id, "parent_id": p.parent_id},
            id=p.chunk_id,
        )
        for p in passages
    ]


def build_pipeline(
    passages: Sequence[Passage],
    models: LangChainModels,
    workdir: Path,
    *,
    vectors: npt.NDArray[np.float32] | None = None,
    collection: str = "langchain-baseline",
) -> LangChainPipeline:
    """Index ``passages`` (BM25 + a persistent Chroma in ``workdir``) and wire the retrievers.

    Without ``vectors`` the store embeds the passages itself (``add_documents``: the ingest a
    user would run). With ``vectors`` (the scaled latency corpus) those are written straight
    into the same LangChain-created collection, so only the query path is measured.
    """
    _quiet_imports()
    from chromadb.config import Settings as ChromaSettings
    from langchain_chroma import Chroma
    from langchain_classic.retrievers import ContextualCompressionRetriever, EnsembleRetriever
    from langchain_classic.retrievers.document_compressors import CrossEncoderReranker
    from langchain_community.retrievers import BM25Retriever

    docs = _documents(passages)
    vectorstore = Chroma(
        collection_name=collection,
        embedding_function=models.embeddings,
        persist_directory=str(workdir),
        client_settings=ChromaSettings(anonymized_telemetry=False, is_persistent=True),
    )
    if vectors is None:
        # Chroma caps one add; LangChain users batch the same way.
        for start in range(0, len(docs), 2000):
            part = docs[start : start + 2000]
            vectorstore.add_documents(part, ids=[d.id for d in part])
    else:
        if len(vectors) != len(docs):
            raise ValueError(f"{len(vectors)} vectors for {len(docs)} passages")
        for start in range(0, len(docs), 2000):
            part = docs[start : start + 2000]
            vectorstore._collection.upsert(
                ids=[d.id for d in part],
                embeddings=vectors[start : start + 2000],
                documents=[d.page_content for d in part],
                metadatas=[d.metadata for d in part],
            )
    bm25 = BM25Retriever.from_documents(docs, k=PER_RETRIEVER_K)
    dense = vectorstore.as_retriever(search_kwargs={"k": PER_RETRIEVER_K})
    ensemble = EnsembleRetriever(retrievers=[bm25, dense], weights=[0.5, 0.5], id_key="chunk_id")
    reranked = ContextualCompressionRetriever(
        base_compressor=CrossEncoderReranker(model=models.cross_encoder, top_n=RERANK_TOP_N),
        base_retriever=ensemble,
    )
    return LangChainPipeline(
        dense=dense, ensemble=ensemble, reranked=reranked, vectorstore=vectorstore, bm25=bm25
    )


def card_ranking(docs: Sequence[Any]) -> list[str]:
    """Documents -> card ids, best chunk per card first (as citewall dedupes by parent)."""
    seen: dict[str, None] = {}
    for d in docs:
        seen.setdefault(str(d.metadata["parent_id"]), None)
    return list(seen)
