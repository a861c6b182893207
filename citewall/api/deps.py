"""Request dependencies: the runtime, a database session, the metrics, the rate limiter, the
current user and role checks.

``SessionDep``, ``MetricsDep``, ``LimiterDep``, ``CurrentUser`` and ``AdminUser`` are the
aliases routes declare: a route takes ``request: Request`` only for what only the request has
(its headers, its address). The bearer
scheme is declared with ``HTTPBearer`` so OpenAPI shows it; missing, malformed, unknown,
revoked and expired tokens all answer 401 with ``WWW-Authenticate: Bearer``; a member on an
admin route 403. With the admin proxy configured (``auth.proxy``), a request without a bearer
token may carry the proxy's assertion instead, and admin routes accept only that.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Literal

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.security.utils import get_authorization_scheme_param
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from citewall.api.limits import RateLimiter
from citewall.api.metrics import ApiMetrics
from citewall.auth.csrf import CSRF_HEADER, check_same_site
from citewall.auth.factory import SignIn
from citewall.auth.proxy import AdminProxy
from citewall.auth.rejection import TokenRejected
from citewall.errors import AuthError, CitewallError, PermissionDeniedError, StorageError
from citewall.kb.audiences import Viewer
from citewall.runtime import Runtime
from citewall.storage import users
from citewall.storage.models import User

logger = logging.getLogger(__name__)

bearer_scheme = HTTPBearer(
    auto_error=False,
    description="An API token from `citewall users add NAME --role member|admin`, or a "
    "session from POST /api/v1/auth/session.",
)


def get_runtime(request: Request) -> Runtime:
    """The process's ``Runtime`` (set by ``create_app``)."""
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


def get_session(runtime: RuntimeDep) -> Iterator[Session]:
    """One database session per request, closed afterwards (writes commit explicitly).

    Closing a session whose connection died (database restarted mid-request) raises; that must
    not turn the request's clear 503 into a 500, so the failure is logged and dropped.
    """
    session = runtime.session_factory()
    try:
        yield session
    finally:
        try:
            session.close()
        except SQLAlchemyError as exc:
            logger.warning("closing a database session failed: %s", exc.__class__.__name__)


SessionDep = Annotated[Session, Depends(get_session)]


def get_sign_in(request: Request) -> SignIn:
    """The process's sign-in (host tokens, admin proxy), built by ``create_app``."""
    sign_in: SignIn = request.app.state.sign_in
    return sign_in


SignInDep = Annotated[SignIn, Depends(get_sign_in)]


def get_metrics(request: Request) -> ApiMetrics:
    """The process's Prometheus metrics (built by ``create_app``)."""
    metrics: ApiMetrics = request.app.state.metrics
    return metrics


MetricsDep = Annotated[ApiMetrics, Depends(get_metrics)]


def get_limiter(request: Request) -> RateLimiter:
    """The process's rate limiter (per process, or shared in Redis; built by ``create_app``)."""
    limiter: RateLimiter = request.app.state.limiter
    return limiter


LimiterDep = Annotated[RateLimiter, Depends(get_limiter)]
BearerCredentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)]


def require_metrics_token(request: Request, runtime: RuntimeDep) -> None:
    """401 unless the request's bearer token is ``CITEWALL_METRICS_TOKEN`` (when it is set).

    Compared in constant time, as digests so not even its length shows; a missing and a wrong
    token get the same answer.
    """
    expected = runtime.settings.metrics_token
    if expected is None:
        return
    scheme, given = get_authorization_scheme_param(request.headers.get("Authorization"))
    sent = given.strip() if scheme.lower() == "bearer" else ""
    if not hmac.compare_digest(
        hashlib.sha256(sent.encode("utf-8")).digest(),
        hashlib.sha256(expected.get_secret_value().encode("utf-8")).digest(),
    ):
        raise AuthError(
            "metrics need the metrics token: send 'Authorization: Bearer <CITEWALL_METRICS_TOKEN>'"
        )


@dataclass(frozen=True, slots=True)
class Caller:
    """The authenticated user and how they came: a bearer token or the admin proxy's assertion."""

    user: User
    via: Literal["bearer", "admin_proxy"]


def bearer_token(credentials: HTTPAuthorizationCredentials | None) -> str:
    """The bearer token of the request, or 401 when it is missing or malformed."""
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise AuthError("missing bearer token: send 'Authorization: Bearer <token>'")
    token = credentials.credentials.strip()
    if not token or len(token) > 512:
        raise AuthError("malformed bearer token")
    return token


def proxy_assertion(
    request: Request, proxy: AdminProxy, credentials: HTTPAuthorizationCredentials | None
) -> str | None:
    """The proxy's assertion when the request authenticates by it: the proxy's header is there
    and no citewall bearer token is sent. With ``CITEWALL_ADMIN_PROXY_HEADER=Authorization``
    (an oauth2-proxy passing the ID token as a bearer token) the bearer token is the assertion
    unless it is a citewall token (``cw_...``)."""
    value = request.headers.get(proxy.header)
    if not value:
        return None
    if credentials is None:
        return value
    carries_assertion = proxy.header.lower() == "authorization"
    citewall_token = credentials.credentials.strip().startswith(users.TOKEN_PREFIX)
    return value if carries_assertion and not citewall_token else None


def proxy_admin(
    request: Request, session: Session, proxy: AdminProxy, assertion: str, metrics: ApiMetrics
) -> User:
    """The admin the proxy's ``assertion`` names, counted in ``citewall_sign_ins_total``; the
    CSRF rule applies to unsafe methods (the assertion is an ambient credential)."""
    try:
        user = proxy.admin(session, assertion)
    except TokenRejected as exc:
        metrics.record_sign_in("admin_proxy", exc.reason)
        raise
    except PermissionDeniedError:
        metrics.record_sign_in("admin_proxy", "not_allowed")
        raise
    metrics.record_sign_in("admin_proxy", "ok")
    check_same_site(
        request.method,
        request.headers.get(CSRF_HEADER),
        request.headers.get("Origin"),
        request.headers.get("Host"),
    )
    return user


def get_caller(
    request: Request,
    session: SessionDep,
    runtime: RuntimeDep,
    sign_in: SignInDep,
    credentials: BearerCredentials,
    metrics: MetricsDep,
    limiter: LimiterDep,
) -> Caller:
    """The authenticated caller or 401; counts toward the rate limit.

    A bearer token is used when sent; without one, the admin proxy's assertion (when the
    proxy is configured and the header is present).
    """
    proxy = sign_in.admin_proxy
    assertion = proxy_assertion(request, proxy, credentials) if proxy is not None else None
    if proxy is not None and assertion is not None:
        caller = Caller(proxy_admin(request, session, proxy, assertion, metrics), "admin_proxy")
    else:
        token = bearer_token(credentials)
        try:
            user = users.authenticate(session, token, now=runtime.clock())
        except SQLAlchemyError as exc:
            raise StorageError("could not check the token") from exc
        if user is None:
            raise AuthError("unknown, revoked or expired token")
        caller = Caller(user, "bearer")
    try:  # end the read transaction: a long turn must not hold it (or a dead connection) open
        session.commit()
    except SQLAlchemyError as exc:
        raise StorageError("could not check the token") from exc
    # Per member, not per token: a member with several tokens shares one limit.
    limiter.hit(f"user:{caller.user.id}")
    return caller


CallerDep = Annotated[Caller, Depends(get_caller)]


def get_current_user(caller: CallerDep) -> User:
    """The authenticated user (bearer token or admin proxy assertion) or 401."""
    return caller.user


CurrentUser = Annotated[User, Depends(get_current_user)]


def get_viewer(user: CurrentUser) -> Viewer:
    """Who the request retrieves for (``users.viewer_of``): an admin sees every card, a
    member the cards of their groups (as of their latest sign-in) and the unrestricted ones."""
    return users.viewer_of(user)


CurrentViewer = Annotated[Viewer, Depends(get_viewer)]


def get_admin_user(caller: CallerDep, sign_in: SignInDep) -> User:
    """The current user if an admin, else a 403. With the admin proxy configured, only its
    assertion reaches admin routes: an admin bearer token gets 403 there."""
    if sign_in.admin_proxy is not None and caller.via != "admin_proxy":
        raise PermissionDeniedError("admin routes are behind the identity-aware proxy")
    if caller.user.role != "admin":
        raise PermissionDeniedError("this route needs the admin role")
    return caller.user


AdminUser = Annotated[User, Depends(get_admin_user)]


def is_admin_caller(
    request: Request, runtime: Runtime, sign_in: SignIn, metrics: ApiMetrics
) -> bool:
    """Whether ``request`` comes from an admin, for a route that is open to everyone but tells
    admins more (``/readyz``): the admin proxy's assertion when the proxy is configured, else
    an admin bearer token. Never raises and never answers 401: credentials that are missing,
    bad or cannot be checked (the database down) simply count as none.
    """
    proxy = sign_in.admin_proxy
    scheme, token = get_authorization_scheme_param(request.headers.get("Authorization"))
    token = token.strip()
    credentials = None
    if scheme.lower() == "bearer" and token:
        credentials = HTTPAuthorizationCredentials(scheme=scheme, credentials=token)
    try:
        with runtime.session_factory() as session:
            if proxy is not None:
                assertion = proxy_assertion(request, proxy, credentials)
                if assertion is None:
                    return False
                user: User | None = proxy_admin(request, session, proxy, assertion, metrics)
            else:
                if credentials is None or len(token) > 512:
                    return False
                user = users.authenticate(session, token, now=runtime.clock())
            session.commit()  # authenticate may note the token's last use
    except (CitewallError, SQLAlchemyError) as exc:
        logger.warning("readiness: could not check the caller: %s", exc.__class__.__name__)
        return False
    return user is not None and user.role == "admin"
