"""Search the KB. Members get external cards only; admins get everything.

This closes decision 0002's "known open surface"
(docs/decisions/0002-external-only-citations.md): member search goes through the same
``external_sources_only`` helper as chat, so an internal card never appears in its results.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from citewall.api.deps import AdminUser, CurrentUser, CurrentViewer, RuntimeDep
from citewall.api.json_body import StrictJsonRoute
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.schemas import (
    AdminSearchHit,
    AdminSearchResponse,
    SearchRequest,
    SearchResponsePublic,
    SearchResultPublic,
)
from citewall.boundary.external import external_sources_only
from citewall.kb.audiences import EVERY_CARD, retrievable_for
from citewall.retrieval.types import ContextChunk
from citewall.storage.sources import StoredSource

router = APIRouter(
    prefix="/api/v1",
    tags=["search"],
    responses=error_responses(*AUTHENTICATED, 400, 413),
    route_class=StrictJsonRoute,
)

#: Most cards one search retrieves before the external-only filter.
MAX_FETCH = 100


def _as_source(n: int, chunk: ContextChunk) -> StoredSource:
    """A retrieved chunk as the stored source the boundary helper reads."""
    licence = chunk.metadata.get("license")
    return StoredSource(
        n=n,
        card_id=chunk.id,
        title=chunk.title,
        text=chunk.text,
        source_url=chunk.source,
        source_license=licence if isinstance(licence, str) else None,
        metadata=dict(chunk.metadata),
    )


@router.post("/search", response_model=SearchResponsePublic)
def search(
    body: SearchRequest, user: CurrentUser, viewer: CurrentViewer, runtime: RuntimeDep
) -> Any:
    """External (public) cards matching ``query`` that the caller's audiences allow, best
    first, at most ``limit``."""
    # Over-fetch: internal cards are dropped below, and the member still deserves ``limit``.
    context = runtime.retriever.retrieve(
        body.query, k=min(MAX_FETCH, body.limit * 3), cards=retrievable_for(viewer)
    )
    # Serve boundary (decision 0002): same helper as chat and history.
    public = external_sources_only(
        (_as_source(i, c) for i, c in enumerate(context.chunks, 1)), hybrid_path=context.hybrid_path
    )
    return SearchResponsePublic(
        results=[
            SearchResultPublic(
                card_id=s.card_id, title=s.title, url=s.url, license=s.license, excerpt=s.excerpt
            )
            for s in public[: body.limit]
        ],
        hybrid_path=context.hybrid_path,
    )


@router.post(
    "/admin/search",
    response_model=AdminSearchResponse,
    tags=["admin"],
    responses=error_responses(403),
)
def admin_search(body: SearchRequest, user: AdminUser, runtime: RuntimeDep) -> Any:
    """Every matching card (internal included) with full metadata and per-stage scores."""
    context = runtime.retriever.retrieve(body.query, k=body.limit, cards=EVERY_CARD)
    return AdminSearchResponse(
        results=[
            AdminSearchHit(
                card_id=c.id,
                title=c.title,
                url=c.source,
                license=c.metadata.get("license"),
                text=c.text,
                metadata=c.metadata,
                scores={
                    "rank": c.rank,
                    "dense_rank": c.dense_rank,
                    "dense_score": c.dense_score,
                    "bm25_rank": c.bm25_rank,
                    "bm25_score": c.bm25_score,
                    "rrf_rank": c.rrf_rank,
                    "rrf_score": c.rrf_score,
                    "rerank_rank": c.rerank_rank,
                    "rerank_logit": c.rerank_logit,
                },
            )
            for c in context.chunks[: body.limit]
        ],
        hybrid_path=context.hybrid_path,
        notes=list(context.notes),
    )
