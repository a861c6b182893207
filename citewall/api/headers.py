"""Security headers on every response, and CORS for the embedding origins (pure ASGI middleware,
so streams pass through untouched).

Every response to an authenticated request (any ``/api/...`` path, and any request that carries
``Authorization``) is ``Cache-Control: no-store``, errors included: admin routes return the whole
corpus, and no browser or proxy cache may keep what a token was needed to see.

The strict CSP allows only same-origin assets, on every page: the web UI and the API docs
(``api/docs.py`` serves Swagger UI from packaged files, with no inline script) alike. Only the
embeddable chat (``/embed``) may be framed, and only by citewall itself and the origins of
``CITEWALL_EMBED_ORIGINS``; every other page refuses every frame (``frame-ancestors 'none'``
and ``X-Frame-Options: DENY``).
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def content_security_policy(frame_ancestors: str = "'none'") -> str:
    """The strict CSP, framed by ``frame_ancestors`` (a CSP source list)."""
    return (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
        f"frame-ancestors {frame_ancestors}; form-action 'self'"
    )


STRICT_CSP = content_security_policy()

SECURITY_HEADERS: dict[str, str] = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
    "Cross-Origin-Opener-Policy": "same-origin",
}

#: The methods and request headers embedding pages may use on the API. Never the CSRF header:
#: a cross-site page must not be able to send what proves a request came from citewall's own UI.
CORS_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
CORS_HEADERS = ("Authorization", "Content-Type")


def embed_csp(origins: Sequence[str]) -> str:
    """The CSP of the embeddable chat: framed by citewall itself and the embedding ``origins``.

    >>> "frame-ancestors 'self' https://help.example.com;" in embed_csp(["https://help.example.com"])
    True
    """
    return content_security_policy(" ".join(["'self'", *origins]))


def is_api_path(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


def is_embed_document(path: str) -> bool:
    """Whether ``path`` is the embeddable chat (``/embed`` and the paths under it)."""
    return path == "/embed" or path.startswith("/embed/")


def is_authenticated(scope: Scope) -> bool:
    """Whether a request is one whose answer only its token holder may see."""
    if is_api_path(scope.get("path", "")):
        return True
    return any(name.lower() == b"authorization" for name, _ in scope.get("headers", []))


def headers_for(
    *, authenticated: bool = False, embed_origins: Sequence[str] | None = None
) -> list[tuple[bytes, bytes]]:
    """The security headers for a response (with ``no-store`` when ``authenticated``).

    With ``embed_origins``, the headers of the embeddable chat: its CSP lets those origins frame
    it, and there is no ``X-Frame-Options`` (which cannot name an origin).
    """
    if embed_origins is None:
        pairs = [("Content-Security-Policy", STRICT_CSP), *SECURITY_HEADERS.items()]
    else:
        framed = {k: v for k, v in SECURITY_HEADERS.items() if k != "X-Frame-Options"}
        pairs = [("Content-Security-Policy", embed_csp(embed_origins)), *framed.items()]
    if authenticated:
        pairs.append(("Cache-Control", "no-store"))
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in pairs]


class SecurityHeadersMiddleware:
    """Adds ``headers_for(...)`` to every HTTP response, replacing any same-named header (and any
    ``X-Frame-Options``). ``embed_origins`` are read once, when the app is built."""

    def __init__(self, app: ASGIApp, embed_origins: Sequence[str] = ()) -> None:
        self.app = app
        self.embed_origins = tuple(embed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = headers_for(
            authenticated=is_authenticated(scope),
            embed_origins=self.embed_origins if is_embed_document(scope["path"]) else None,
        )
        names = {k for k, _ in extra} | {b"x-frame-options"}

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message["headers"] = kept + extra
            await send(message)

        await self.app(scope, receive, send_with_headers)


class ApiCorsMiddleware:
    """CORS for the embedding ``origins`` on ``/api`` paths only, without credentials: pages of
    those origins may call the API with a bearer token (``Authorization``), never with a cookie.
    """

    def __init__(self, app: ASGIApp, origins: Sequence[str]) -> None:
        self.app = app
        self.cors = CORSMiddleware(
            app,
            allow_origins=list(origins),
            allow_methods=CORS_METHODS,
            allow_headers=CORS_HEADERS,
            allow_credentials=False,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and is_api_path(scope["path"]):
            await self.cors(scope, receive, send)
        else:
            await self.app(scope, receive, send)
