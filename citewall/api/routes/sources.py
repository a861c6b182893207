"""Admin routes of the registered KB sources: the list with each source's last sync, and a
source's sync history. Registering, syncing and removing are `citewall sources` and
`citewall sync` (docs/knowledge.md)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from citewall.api.deps import AdminUser, SessionDep
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.source_schemas import (
    RegisteredSourcePublic,
    SyncRunPublic,
    registered_source_public,
    sync_run_public,
)
from citewall.storage import kb_sources

router = APIRouter(
    prefix="/api/v1/admin", tags=["admin"], responses=error_responses(*AUTHENTICATED, 403)
)


@router.get("/sources", response_model=list[RegisteredSourcePublic])
def list_sources(session: SessionDep, admin: AdminUser) -> Any:
    """Every registered source, with its schedule, card count and last sync."""
    runs = kb_sources.last_runs(session)
    return [registered_source_public(s, runs.get(s.id)) for s in kb_sources.list_sources(session)]


@router.get(
    "/sources/{source_id}/runs",
    response_model=list[SyncRunPublic],
    responses=error_responses(404),
)
def source_runs(
    source_id: int,
    session: SessionDep,
    admin: AdminUser,
    limit: int = Query(20, ge=1, le=200),
) -> Any:
    """A source's syncs, newest first."""
    kb_sources.get_source(session, source_id)  # 404 for an unknown source
    return [sync_run_public(r) for r in kb_sources.source_runs(session, source_id, limit)]
