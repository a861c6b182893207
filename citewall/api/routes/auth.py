"""Sign-in with the host site's token, sign-out, and what sign-in this server offers.

``POST /api/v1/auth/session`` exchanges a host site's signed token (a JWT) for a citewall
session: an opaque bearer token with an expiry (no cookie: it works in an iframe with
third-party cookies blocked, and nothing ambient means no CSRF). ``DELETE`` revokes it.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Response

from citewall.api.deps import (
    BearerCredentials,
    LimiterDep,
    MetricsDep,
    RuntimeDep,
    SessionDep,
    SignInDep,
    bearer_token,
)
from citewall.api.json_body import StrictJsonRoute
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.schemas import AuthConfigPublic, SessionPublic, SignInRequest
from citewall.auth.rejection import TokenRejected
from citewall.errors import AuthError, NotFoundError
from citewall.storage.sessions import revoke_session

router = APIRouter(prefix="/api/v1/auth", tags=["auth"], route_class=StrictJsonRoute)

NOT_CONFIGURED = "sign-in with a host token is not configured"
NOT_A_SESSION = "not a session; revoke API tokens with citewall users revoke"


@router.get("/config", response_model=AuthConfigPublic)
def auth_config(sign_in: SignInDep) -> Any:
    """Whether members may sign in with a host token, and whether admins come through an
    identity-aware proxy (no authentication; no secrets)."""
    return AuthConfigPublic(
        host_sign_in=sign_in.member is not None, admin_proxy=sign_in.admin_proxy is not None
    )


@router.post(
    "/session",
    status_code=201,
    response_model=SessionPublic,
    responses=error_responses(
        400,
        429,
        503,
        described={
            401: "The host token was not accepted (the reason is in the server log).",
            404: "Sign-in with a host token is not configured on this server.",
        },
    ),
)
def sign_in_with_host_token(
    body: SignInRequest,
    session: SessionDep,
    sign_in: SignInDep,
    runtime: RuntimeDep,
    metrics: MetricsDep,
    limiter: LimiterDep,
) -> Any:
    """Exchange the host site's token for a session (``role`` is ``member``).

    Every token that is not accepted answers the same 401; the reason is in the server log.
    404 when the server has no host sign-in configured.
    """
    member = sign_in.member
    if member is None:
        raise NotFoundError(NOT_CONFIGURED)
    try:
        signed = member.provision(session, body.token)
        limiter.hit(f"user:{signed.user.id}")  # before a session row is written
        issued = member.open_session(session, signed)
    except TokenRejected as exc:
        metrics.record_sign_in("member", exc.reason)
        raise
    metrics.record_sign_in("member", "ok")
    user = issued.user
    return SessionPublic(
        token=issued.token,
        expires_at=issued.expires_at,
        name=user.name,
        role=user.role,
        regenerate_varies=runtime.settings.regenerate_varies,
        handoff=runtime.settings.handoff,
    )


@router.delete("/session", status_code=204, responses=error_responses(400, *AUTHENTICATED))
def sign_out(session: SessionDep, runtime: RuntimeDep, credentials: BearerCredentials) -> Response:
    """Revoke the session sent as the bearer token (an API token is refused with 400)."""
    outcome = revoke_session(session, bearer_token(credentials), runtime.clock())
    if outcome == "unknown":
        raise AuthError("unknown, revoked or expired token")
    if outcome == "not_a_session":
        raise HTTPException(status_code=400, detail=NOT_A_SESSION)
    return Response(status_code=204)
