"""Request dependencies: the runtime, a database session, the current user and role checks.

``SessionDep``, ``CurrentUser`` and ``AdminUser`` are the aliases routes declare. The bearer
scheme is declared with ``HTTPBearer`` so OpenAPI shows it; missing, malformed, unknown and
revoked tokens all answer 401 with ``WWW-Authenticate: Bearer``; a member on an admin route 403.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.security.utils import get_authorization_scheme_param
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from citewall.api.limits import RateLimiter
from citewall.errors import AuthError, CitewallError, PermissionDeniedError, StorageError
from citewall.runtime import Runtime
from citewall.storage import users
from citewall.storage.models import User

logger = logging.getLogger(__name__)

bearer_scheme = HTTPBearer(
    auto_error=False,
    description="An API token from `citewall users add NAME --role member|admin`.",
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


def get_current_user(
    request: Request,
    session: SessionDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)],
) -> User:
    """The authenticated user or 401; counts toward the rate limit."""
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise AuthError("missing bearer token: send 'Authorization: Bearer <token>'")
    token = credentials.credentials.strip()
    if not token or len(token) > 512:
        raise AuthError("malformed bearer token")
    try:
        user = users.authenticate(session, token)
    except SQLAlchemyError as exc:
        raise StorageError("could not check the token") from exc
    if user is None:
        raise AuthError("unknown or revoked token")
    try:  # end the read transaction: a long turn must not hold it (or a dead connection) open
        session.commit()
    except SQLAlchemyError as exc:
        raise StorageError("could not check the token") from exc
    # Per member, not per token: a member with several tokens shares one limit.
    limiter: RateLimiter = request.app.state.limiter
    limiter.hit(f"user:{user.id}")
    return user


CurrentUser = Annotated[User, Depends(get_current_user)]


def get_admin_user(user: CurrentUser) -> User:
    """The current user if an admin, else a 403."""
    if user.role != "admin":
        raise PermissionDeniedError("this route needs the admin role")
    return user


AdminUser = Annotated[User, Depends(get_admin_user)]


def is_admin_caller(request: Request, runtime: Runtime) -> bool:
    """Whether ``request`` carries a valid admin bearer token, for a route that is open to
    everyone but tells admins more (``/readyz``). Never raises and never answers 401: a token
    that is missing, unknown or cannot be checked (the database down) simply counts as none.
    """
    scheme, token = get_authorization_scheme_param(request.headers.get("Authorization"))
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 512:
        return False
    try:
        with runtime.session_factory() as session:
            user = users.authenticate(session, token)
            session.commit()  # authenticate may note the token's last use
    except (CitewallError, SQLAlchemyError) as exc:
        logger.warning("readiness: could not check a token: %s", exc.__class__.__name__)
        return False
    return user is not None and user.role == "admin"
