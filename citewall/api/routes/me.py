"""Who am I: the authenticated user's name and role."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from citewall.api.deps import BearerCredentials, CallerDep, RuntimeDep, SessionDep
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.schemas import MePublic
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
