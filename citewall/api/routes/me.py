"""Who am I: the authenticated user's name and role."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from citewall.api.audit import AuditTrail
from citewall.api.deps import (
    BearerCredentials,
    CallerDep,
    CurrentViewer,
    RuntimeDep,
    SessionDep,
)
from citewall.api.privacy_schemas import MemberExport, MemberHandoffPublic
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.routes.conversations import member_conversation
from citewall.api.schemas import MePublic
from citewall.storage import conversations, handoffs
from citewall.storage.sessions import is_session

router = APIRouter(prefix="/api/v1", tags=["me"], responses=error_responses(*AUTHENTICATED))


@router.get("/me", response_model=MePublic)
def me(
    caller: CallerDep, session: SessionDep, runtime: RuntimeDep, credentials: BearerCredentials
) -> Any:
    """The caller's name and role (``member`` or ``admin``); without a bearer token, the admin
    the identity-aware proxy's assertion names (when configured): the SPA detects proxy mode.
    ``session`` says whether the bearer token is a session, which sign-out revokes;
    ``regenerate_varies`` whether Regenerate can give a different answer; ``handoff`` whether a
    member may ask for a person."""
    user = caller.user
    signed_in_by_session = (
        caller.via == "bearer"
        and credentials is not None
        and is_session(session, credentials.credentials)
    )
    return MePublic(
        name=user.name,
        role=user.role,
        session=signed_in_by_session,
        regenerate_varies=runtime.settings.regenerate_varies,
        handoff=runtime.settings.handoff,
    )


#: Conversations one export reads per page of the listing.
_EXPORT_PAGE = 200


@router.get("/me/export", response_model=MemberExport)
def export(
    caller: CallerDep,
    session: SessionDep,
    runtime: RuntimeDep,
    trail: AuditTrail,
    viewer: CurrentViewer,
) -> Any:
    """All of your conversations as JSON, as the conversation views show them (your questions,
    the answers' prose, their public sources and your ratings), and your requests for a
    person with their notes. Written to the audit log."""
    user = caller.user
    found: list[Any] = []
    offset = 0
    while True:
        page = conversations.list_conversations(session, user.id, limit=_EXPORT_PAGE, offset=offset)
        found.extend(member_conversation(session, str(s.id), user.id, viewer) for s in page)
        if len(page) < _EXPORT_PAGE:
            break
        offset += _EXPORT_PAGE
    asked = [
        MemberHandoffPublic(
            id=h.id, conversation_id=h.conversation_id, created_at=h.created_at, message=h.message
        )
        for h in handoffs.member_handoffs(session, user.id)
    ]
    trail.record(session, "export", f"user:{user.id}", {"conversations": len(found)})
    return MemberExport(
        name=user.name, exported_at=runtime.clock(), conversations=found, handoffs=asked
    )
