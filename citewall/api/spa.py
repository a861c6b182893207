"""Serve the built web UI (``citewall/web_dist``) with an index.html fallback for client routes.

``/api/...`` paths are never answered with the SPA (an unknown API path is a JSON 404). When
the build is absent, ``/`` answers a short page saying how to build it.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse, HTMLResponse, Response

WEB_DIST = Path(__file__).resolve().parent.parent / "web_dist"

NOT_BUILT = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>citewall</title></head><body>
<h1>citewall API is running</h1>
<p>The web UI is not built. Build it with <code>scripts/install</code>
(or <code>cd web &amp;&amp; npm ci &amp;&amp; npm run build</code>), then reload.</p>
<p>API documentation: <a href="/docs">/docs</a>.</p>
</body></html>
"""


def build_spa_router(dist: Path = WEB_DIST) -> APIRouter:
    """A router with a hidden catch-all GET that serves files from ``dist``."""
    router = APIRouter(include_in_schema=False)

    @router.get("/{full_path:path}")
    def spa(full_path: str) -> Response:
        if full_path == "api" or full_path.startswith("api/"):
            raise HTTPException(status_code=404, detail="no such API route")
        index = dist / "index.html"
        if not index.is_file():
            if full_path in {"", "index.html"}:
                return HTMLResponse(NOT_BUILT)
            raise HTTPException(status_code=404, detail="not found")
        if full_path:
            candidate = (dist / full_path).resolve()
            # Never serve outside the build directory (``..`` or symlinks).
            if candidate.is_relative_to(dist.resolve()) and candidate.is_file():
                return FileResponse(candidate)
            if "." in full_path.rsplit("/", 1)[-1]:
                raise HTTPException(status_code=404, detail="not found")
        return FileResponse(index, headers={"Cache-Control": "no-cache"})

    return router
