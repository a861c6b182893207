"""Security headers on every response (pure ASGI middleware, so streams pass through untouched).

Every response to an authenticated request (any ``/api/...`` path, and any request that carries
``Authorization``) is ``Cache-Control: no-store``, errors included: admin routes return the whole
corpus, and no browser or proxy cache may keep what a token was needed to see.

The strict CSP allows only same-origin assets, on every page: the web UI and the API docs
(``api/docs.py`` serves Swagger UI from packaged files, with no inline script) alike.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

STRICT_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)

SECURITY_HEADERS: dict[str, str] = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def is_authenticated(scope: Scope) -> bool:
    """Whether a request is one whose answer only its token holder may see."""
    path: str = scope.get("path", "")
    if path == "/api" or path.startswith("/api/"):
        return True
    return any(name.lower() == b"authorization" for name, _ in scope.get("headers", []))


def headers_for(*, authenticated: bool = False) -> list[tuple[bytes, bytes]]:
    """The security headers for a response (with ``no-store`` when ``authenticated``)."""
    pairs = [("Content-Security-Policy", STRICT_CSP), *SECURITY_HEADERS.items()]
    if authenticated:
        pairs.append(("Cache-Control", "no-store"))
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in pairs]


class SecurityHeadersMiddleware:
    """Adds ``headers_for(...)`` to every HTTP response, replacing any same-named header."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = headers_for(authenticated=is_authenticated(scope))
        names = {k for k, _ in extra}

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message["headers"] = kept + extra
            await send(message)

        await self.app(scope, receive, send_with_headers)
