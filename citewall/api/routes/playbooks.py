"""Admin routes that change the KB from the admin pages: playbooks (written, edited, their
history and rollback) and disabling or enabling any card. Each change runs the CLI's ingest
path (``ingest.playbooks``) and is a ``cards.change`` line of the audit log."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, status

from citewall.api.audit import AuditTrail
from citewall.api.deps import AdminUser, RuntimeDep, SessionDep
from citewall.api.json_body import StrictJsonRoute
from citewall.api.playbook_schemas import (
    PlaybookCreate,
    PlaybookPublic,
    PlaybookRollback,
    PlaybookUpdate,
    PlaybookVersionPublic,
    PlaybookWrite,
    playbook_public,
    version_public,
)
from citewall.api.responses import AUTHENTICATED, EncodableJSONResponse, error_responses
from citewall.api.routes.admin import admin_card
from citewall.api.schemas import AdminCard
from citewall.errors import NotFoundError
from citewall.ingest.playbooks import (
    CardRefusedError,
    KBWriter,
    PlaybookFields,
    playbook_card,
    rollback_playbook,
    save_playbook,
    set_card_enabled,
)
from citewall.runtime import Runtime
from citewall.storage import card_versions, cards
from citewall.storage.card_versions import PlaybookVersion

_CHANGES = {
    409: "The id is taken, the playbook changed since the edit began, or the card is in that "
    "state already.",
    422: "The card was refused: each problem names its field.",
}
router = APIRouter(
    prefix="/api/v1/admin",
    tags=["admin"],
    responses=error_responses(*AUTHENTICATED, 403, 404, described=_CHANGES),
    route_class=StrictJsonRoute,
)


def _writer(runtime: Runtime) -> KBWriter:
    return KBWriter(runtime.settings, runtime.session_factory, runtime.embedder.model)


def _fields(body: PlaybookWrite) -> PlaybookFields:
    return PlaybookFields(
        title=body.title, body=body.body, reply=body.reply, audiences=tuple(body.audiences)
    )


def refused(exc: CardRefusedError) -> EncodableJSONResponse:
    """The 422 of a refused card: one problem per field, as request validation answers."""
    problems = [
        {"loc": ["body", p.field or "card"], "msg": p.reason, "type": "card"} for p in exc.problems
    ]
    return EncodableJSONResponse({"detail": problems}, status_code=422)


def _public(session: SessionDep, version: PlaybookVersion) -> PlaybookPublic:
    row = cards.get_card(session, version.card_id)
    return playbook_public(
        version,
        disabled=row is not None and row.disabled_at is not None,
        in_catalogue=row is not None,
    )


@router.get("/playbooks", response_model=list[PlaybookPublic])
def list_playbooks(session: SessionDep, admin: AdminUser) -> Any:
    """Every playbook's newest version, by id."""
    return [_public(session, v) for v in card_versions.latest_versions(session)]


@router.post("/playbooks", response_model=PlaybookPublic, status_code=status.HTTP_201_CREATED)
def create_playbook(
    body: PlaybookCreate,
    session: SessionDep,
    runtime: RuntimeDep,
    trail: AuditTrail,
    admin: AdminUser,
) -> Any:
    """Write a new playbook (an internal card): validated and ingested as a card file's, served
    at once, version 1 of its history."""
    try:
        card = playbook_card(body.id, _fields(body))
    except CardRefusedError as exc:
        return refused(exc)
    saved = save_playbook(
        _writer(runtime), card, author=trail, now=runtime.clock(), base_version=None
    )
    return _public(session, saved)


@router.get("/playbooks/{playbook_id}", response_model=PlaybookPublic)
def get_playbook(playbook_id: str, session: SessionDep, admin: AdminUser) -> Any:
    """A playbook's newest version."""
    newest = card_versions.latest_versions(session, [playbook_id])
    if not newest:
        raise NotFoundError(f"no playbook {playbook_id[:200]!r}")
    return _public(session, newest[0])


@router.put("/playbooks/{playbook_id}", response_model=PlaybookPublic)
def update_playbook(
    playbook_id: str,
    body: PlaybookUpdate,
    session: SessionDep,
    runtime: RuntimeDep,
    trail: AuditTrail,
    admin: AdminUser,
) -> Any:
    """Save an edit as the next version (``base_version``: the version the edit began from)."""
    try:
        card = playbook_card(playbook_id, _fields(body))
    except CardRefusedError as exc:
        return refused(exc)
    saved = save_playbook(
        _writer(runtime),
        card,
        author=trail,
        now=runtime.clock(),
        base_version=body.base_version,
    )
    return _public(session, saved)


@router.get("/playbooks/{playbook_id}/versions", response_model=list[PlaybookVersionPublic])
def playbook_versions(playbook_id: str, session: SessionDep, admin: AdminUser) -> Any:
    """Every saved version, newest first."""
    found = card_versions.versions(session, playbook_id)
    if not found:
        raise NotFoundError(f"no playbook {playbook_id[:200]!r}")
    return [version_public(v) for v in found]


@router.post("/playbooks/{playbook_id}/rollback", response_model=PlaybookPublic)
def rollback(
    playbook_id: str,
    body: PlaybookRollback,
    session: SessionDep,
    runtime: RuntimeDep,
    trail: AuditTrail,
    admin: AdminUser,
) -> Any:
    """Make an earlier version's fields the next version (the history keeps every one)."""
    saved = rollback_playbook(
        _writer(runtime), playbook_id, body.version, author=trail, now=runtime.clock()
    )
    return _public(session, saved)


@router.post("/cards/{card_id}/disable", response_model=AdminCard)
def disable_card(card_id: str, runtime: RuntimeDep, trail: AuditTrail, admin: AdminUser) -> Any:
    """Stop serving a card (public or internal): kept in the catalogue, removed from every
    index; every replica stops retrieving it within its refresh interval."""
    row = set_card_enabled(_writer(runtime), card_id, False, author=trail, now=runtime.clock())
    return admin_card(row)


@router.post("/cards/{card_id}/enable", response_model=AdminCard)
def enable_card(card_id: str, runtime: RuntimeDep, trail: AuditTrail, admin: AdminUser) -> Any:
    """Serve a disabled card again (indexed from its catalogue row)."""
    row = set_card_enabled(_writer(runtime), card_id, True, author=trail, now=runtime.clock())
    return admin_card(row)
