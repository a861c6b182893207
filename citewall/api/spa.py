"""Serve the built web UI (``citewall/web_dist``) with an index.html fallback for client routes.

The UI is the router's fallback (``Router.default``), not a catch-all route, so it answers only
what no route does: a known path asked with the wrong method stays a 405 with ``Allow``
(``GET /api/v1/chat``), and a route's path with a trailing slash is redirected to the route
(``/healthz/`` -> ``/healthz``) instead of serving index.html. ``/api/...`` paths are never
answered with the UI (an unknown API path is a JSON 404). When the build is absent, ``/``
answers a short page saying how to build it.

Which paths name files is decided by where they are, never by a dot: client routes carry ids
that hold dots (a crawled card's ``site-help-example-com-00613d60.guides-void-a-label-...``),
while the build's files all live in its asset folder or at its root. A path there that is not
a file is a 404; any other path is a client route and gets ``index.html``.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse, HTMLResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

WEB_DIST = Path(__file__).resolve().parent.parent / "web_dist"

NOT_BUILT = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>citewall</title></head><body>
<h1>citewall API is running</h1>
<p>The web UI is not built. Build it with <code>scripts/install</code>
(or <code>cd web &amp;&amp; npm ci &amp;&amp; npm run build</code>), then reload.</p>
<p>API documentation: <a href="/docs">/docs</a>.</p>
</body></html>
"""

#: The UI is read-only: these are the methods it answers.
UI_METHODS = ("GET", "HEAD")

#: The build's asset folder (Vite's ``build.assetsDir``): the hashed scripts and styles.
ASSET_DIR = "assets"


def is_file_path(path: str) -> bool:
    """Whether ``path`` (no leading slash) names a file of the build rather than a client route:
    anything in the asset folder, or a file name at the root (no client route is one segment
    with a dot).

    >>> [is_file_path(p) for p in ("assets/app.js", "favicon.png", "admin/cards/help.example.com")]
    [True, True, False]
    """
    first, sep, _ = path.partition("/")
    return first == ASSET_DIR or (not sep and "." in first)


def spa_response(dist: Path, path: str, method: str) -> Response:
    """What the UI answers for ``path`` (no leading slash); raises ``HTTPException`` otherwise."""
    if path == "api" or path.startswith("api/"):
        raise HTTPException(status_code=404, detail="no such API route")
    if method not in UI_METHODS:
        raise HTTPException(status_code=405, headers={"Allow": ", ".join(UI_METHODS)})
    index = dist / "index.html"
    if not index.is_file():
        if path in {"", "index.html"}:
            return HTMLResponse(NOT_BUILT)
        raise HTTPException(status_code=404, detail="not found")
    if path:
        candidate = (dist / path).resolve()
        # Never serve outside the build directory (``..`` or symlinks).
        if candidate.is_relative_to(dist.resolve()) and candidate.is_file():
            return FileResponse(candidate)
        if is_file_path(path) or ".." in path.split("/"):
            raise HTTPException(status_code=404, detail="not found")
    return FileResponse(index, headers={"Cache-Control": "no-cache"})


def build_spa_app(dist: Path = WEB_DIST) -> ASGIApp:
    """The UI as an ASGI app for ``Router.default``: what no route of the app answers."""

    async def spa(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # no websocket routes: refuse like Starlette's default
            raise HTTPException(status_code=404)
        scope["endpoint"] = spa  # metrics label it "static", not "unmatched"
        response = spa_response(dist, scope["path"].lstrip("/"), scope["method"])
        await response(scope, receive, send)

    return spa


def install_spa(app: FastAPI, dist: Path = WEB_DIST) -> None:
    """Serve the UI from ``dist`` for every request no route of ``app`` answers."""
    app.router.default = build_spa_app(dist)
