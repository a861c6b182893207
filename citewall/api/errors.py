"""Map citewall errors to HTTP responses: JSON ``{"detail": ...}``, never internal data.

``UserError`` messages are written for the caller (they name the bad value); runtime failures
get a fixed message per class, because their text may carry internals (SQL, paths, card text).
"""

from __future__ import annotations

import logging
import math

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from sqlalchemy.exc import InterfaceError, OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from citewall.api.responses import EncodableJSONResponse
from citewall.errors import (
    AuthError,
    CitewallError,
    ConflictError,
    ConversationFullError,
    GenerationError,
    LimitError,
    MessageTooLongError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitedError,
    RetrievalError,
    ServiceUnavailableError,
    StorageError,
    UserError,
)

log = logging.getLogger("citewall.api")

#: Fixed, caller-safe messages for runtime failures (their own text is logged, not sent).
RUNTIME_DETAILS: dict[type[CitewallError], tuple[int, str]] = {
    StorageError: (503, "the database is unavailable; nothing was saved, please retry"),
    ServiceUnavailableError: (503, "a required service is unavailable; please retry"),
    RetrievalError: (503, "retrieval is unavailable; please retry"),
    GenerationError: (502, "the answer generator failed; nothing was saved, please retry"),
}


def status_for(exc: CitewallError) -> int:
    """The HTTP status code for a citewall error."""
    if isinstance(exc, AuthError):
        return 401
    if isinstance(exc, PermissionDeniedError):
        return 403
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, ConversationFullError | ConflictError):
        return 409
    if isinstance(exc, MessageTooLongError):
        return 413
    if isinstance(exc, RateLimitedError) or (
        isinstance(exc, LimitError) and exc.retry_after_s is not None
    ):
        return 429
    if isinstance(exc, LimitError):
        return 413
    if isinstance(exc, UserError):
        return 422
    for cls, (code, _) in RUNTIME_DETAILS.items():
        if isinstance(exc, cls):
            return code
    return 503


def detail_for(exc: CitewallError) -> str:
    """The caller-facing message: the error's own text for user errors, a fixed one otherwise."""
    if isinstance(exc, UserError):
        return str(exc)
    for cls, (_, detail) in RUNTIME_DETAILS.items():
        if isinstance(exc, cls):
            return detail
    return "the service failed; please retry"


def error_response(exc: CitewallError) -> EncodableJSONResponse:
    """A JSON error response for ``exc`` (with Retry-After / WWW-Authenticate when due)."""
    headers: dict[str, str] = {}
    if isinstance(exc, AuthError):
        headers["WWW-Authenticate"] = "Bearer"
    if isinstance(exc, LimitError) and exc.retry_after_s is not None:
        headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after_s)))
    return EncodableJSONResponse(
        {"detail": detail_for(exc)}, status_code=status_for(exc), headers=headers
    )


async def _citewall_error(_: Request, exc: Exception) -> EncodableJSONResponse:
    assert isinstance(exc, CitewallError)
    if not isinstance(exc, UserError):
        log.warning("request failed: %s: %s", type(exc).__name__, exc)
    return error_response(exc)


def not_json_detail(reason: str) -> str:
    """What a body that is not JSON gets (400, as documented), with ``parse_json_body``'s reason.

    >>> not_json_detail("byte 3 is not UTF-8")[:58]
    'the request body is not valid JSON (byte 3 is not UTF-8); '
    """
    return (
        f"the request body is not valid JSON ({reason}); "
        "send a JSON object (Content-Type: application/json)"
    )


async def _database_lost(_: Request, exc: Exception) -> EncodableJSONResponse:
    # A connection lost where no code wraps it, e.g. the rollback a session runs on close
    # after the server went away: the same honest 503 as a wrapped ``StorageError``.
    log.warning("request failed: the database connection was lost: %s", exc)
    return error_response(StorageError("the database connection was lost"))


async def _validation_error(_: Request, exc: Exception) -> EncodableJSONResponse:
    # FastAPI's default echoes the offending input back; keep location and message only.
    assert isinstance(exc, RequestValidationError)
    for err in exc.errors():
        if err.get("type") == "json_invalid":  # not a field problem: the body is not JSON
            reason = str(err.get("ctx", {}).get("error", "unreadable"))
            return EncodableJSONResponse({"detail": not_json_detail(reason)}, status_code=400)
    problems = [
        {
            "loc": [str(p) for p in err.get("loc", ())],
            "msg": str(err.get("msg", "invalid")),
            "type": str(err.get("type", "value_error")),
        }
        for err in exc.errors()
    ]
    return EncodableJSONResponse({"detail": problems}, status_code=422)


async def _http_error(_: Request, exc: Exception) -> EncodableJSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    headers = dict(exc.headers or {})
    return EncodableJSONResponse(
        {"detail": exc.detail}, status_code=exc.status_code, headers=headers
    )


class UnexpectedErrorMiddleware:
    """Turn an unexpected exception into a logged, generic JSON 500.

    Inside the app's own middleware stack (unlike Starlette's outermost error middleware), so
    the security headers still apply to the response.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def note_start(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, note_start)
        except Exception as exc:
            log.exception("unexpected error", exc_info=exc)
            if started:  # a stream already began; nothing sane can be sent now
                raise
            response = EncodableJSONResponse(
                {"detail": "internal error; it has been logged"}, status_code=500
            )
            await response(scope, receive, send)


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers above on ``app``."""
    app.add_exception_handler(CitewallError, _citewall_error)
    app.add_exception_handler(OperationalError, _database_lost)
    app.add_exception_handler(InterfaceError, _database_lost)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
