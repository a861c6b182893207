"""Who am I: the authenticated user's name and role."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from citewall.api.deps import CurrentUser
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.schemas import MePublic

router = APIRouter(prefix="/api/v1", tags=["me"], responses=error_responses(*AUTHENTICATED))


@router.get("/me", response_model=MePublic)
def me(user: CurrentUser) -> Any:
    """The caller's name and role (``member`` or ``admin``); without a bearer token, the admin
    the identity-aware proxy's assertion names (when configured): the SPA detects proxy mode."""
    return MePublic(name=user.name, role=user.role)
