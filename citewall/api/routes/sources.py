"""Admin routes of the registered KB sources: the list with each source's last sync, a source's
sync history, and what `citewall sources add|remove` and `citewall sync` do: register a source,
sync one now, remove one with its cards. Each write takes the CLI's own path
(``ingest.registration``, ``ingest.sync``) and is audited as it is there."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, status

from citewall.api.audit import AuditTrail
from citewall.api.deps import AdminUser, RuntimeDep, SessionDep
from citewall.api.json_body import StrictJsonRoute
from citewall.api.responses import AUTHENTICATED, EncodableJSONResponse, error_responses
from citewall.api.source_schemas import (
    RegisteredSourcePublic,
    SourceCreate,
    SourceRemoved,
    SyncRunPublic,
    registered_source_public,
    sync_run_public,
)
from citewall.ingest.registration import (
    CrawlAddresses,
    SourceFieldError,
    SourceSpec,
    register_source,
)
from citewall.ingest.sync import remove_source, sync_source
from citewall.storage import kb_sources

router = APIRouter(
    prefix="/api/v1/admin",
    tags=["admin"],
    responses=error_responses(*AUTHENTICATED, 403),
    route_class=StrictJsonRoute,
)

#: A source's id (a database integer: a larger number is a 422, not a database error).
SourceId = Annotated[int, Path(ge=1, le=2**31 - 1)]
_RUNNING = {409: "A sync or removal of this source is already running (here or on a replica)."}


def _problem(field: str, message: str) -> EncodableJSONResponse:
    """A 422 naming the body field it is about, as request validation answers."""
    detail = [{"loc": ["body", field], "msg": message, "type": "source"}]
    return EncodableJSONResponse({"detail": detail}, status_code=422)


@router.get("/sources", response_model=list[RegisteredSourcePublic])
def list_sources(session: SessionDep, admin: AdminUser) -> Any:
    """Every registered source, with its schedule, card count and last sync."""
    runs = kb_sources.last_runs(session)
    return [registered_source_public(s, runs.get(s.id)) for s in kb_sources.list_sources(session)]


@router.post(
    "/sources",
    response_model=RegisteredSourcePublic,
    status_code=status.HTTP_201_CREATED,
    responses=error_responses(
        described={
            409: "The source is registered already.",
            422: "An option was refused: the problem names its field.",
        }
    ),
)
def add_source(body: SourceCreate, runtime: RuntimeDep, trail: AuditTrail, admin: AdminUser) -> Any:
    """Register a site (``url``), a document folder or a card file (``server_path``, on the
    server's host), as `citewall sources add` does; with ``every`` it is due for its first
    sync at once. Nothing is crawled or read until it is synced."""
    where, other = ("url", "server_path") if body.kind == "site" else ("server_path", "url")
    location = body.url if body.kind == "site" else body.server_path
    if location is None:
        return _problem(where, f"a {body.kind} source needs its {where}")
    if getattr(body, other) is not None:
        return _problem(other, f"a {body.kind} source takes a {where}, not a {other}")
    spec = SourceSpec(body.kind, location, body.license, body.every, tuple(body.audiences))
    try:
        source = register_source(
            spec,
            runtime.session_factory,
            addresses=CrawlAddresses.of(runtime.settings),
            actor=trail,
            now=runtime.clock(),
        )
    except SourceFieldError as exc:
        return _problem(where if exc.field == "location" else exc.field, str(exc))
    return registered_source_public(source, None)


@router.post(
    "/sources/{source_id}/sync",
    response_model=SyncRunPublic,
    responses=error_responses(404, described=_RUNNING),
)
def sync_now(
    source_id: SourceId,
    runtime: RuntimeDep,
    trail: AuditTrail,
    admin: AdminUser,
    confirm: bool = Query(
        False, description="Apply a sync held because the source shrank by half or more."
    ),
) -> Any:
    """Sync the source now, as `citewall sync ID [--confirm]` does, and answer its run:
    ``applied``, ``failed`` (the source could not be read; the KB keeps its cards) or ``held``
    (the source came back empty or with fewer than half of its cards: nothing was applied; the
    ``note`` says why, and the same call with ``confirm=true`` applies it)."""
    run = sync_source(
        source_id,
        runtime.settings,
        session_factory=runtime.session_factory,
        embedder=runtime.embedder.model,
        confirm=confirm,
        actor=trail,
    )
    return sync_run_public(run)


@router.delete(
    "/sources/{source_id}",
    response_model=SourceRemoved,
    responses=error_responses(404, described=_RUNNING),
)
def delete_source(
    source_id: SourceId, runtime: RuntimeDep, trail: AuditTrail, admin: AdminUser
) -> Any:
    """Delete the source's cards from every index, then unregister it, as `citewall sources
    remove` does (its runs stay, without it)."""
    source, deleted = remove_source(
        source_id,
        runtime.settings,
        session_factory=runtime.session_factory,
        embedder=runtime.embedder.model,
        actor=trail,
    )
    return SourceRemoved(source=registered_source_public(source, None), deleted=deleted)


@router.get(
    "/sources/{source_id}/runs",
    response_model=list[SyncRunPublic],
    responses=error_responses(404),
)
def source_runs(
    source_id: SourceId,
    session: SessionDep,
    admin: AdminUser,
    limit: int = Query(20, ge=1, le=200),
) -> Any:
    """A source's syncs, newest first."""
    kb_sources.get_source(session, source_id)  # 404 for an unknown source
    return [sync_run_public(r) for r in kb_sources.source_runs(session, source_id, limit)]
