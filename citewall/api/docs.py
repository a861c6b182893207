"""The interactive API documentation at ``/docs`` (Swagger UI), served entirely by the server.

FastAPI's own page loads Swagger UI from a CDN and starts it with an inline script: blank on a
machine without internet, and it needs a CSP that admits the CDN and ``'unsafe-inline'``. Here
the assets come from the ``fastapi-offline`` package (which ships Swagger UI's bundle and
stylesheet), and the start-up code is a script file of its own, so ``/docs`` works offline
under the same strict CSP as every other page. ReDoc is not served: it injects style elements
at run time, which the strict CSP refuses, and one interactive page is enough
(``/openapi.json`` feeds any other viewer).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse, HTMLResponse, Response

DOCS_PATH = "/docs"
ASSETS_PATH = "/docs/assets"

#: The package's files the page uses, with their media types (nothing else is served).
VENDOR_ASSETS: dict[str, str] = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon.png": "image/png",
}

#: Starts Swagger UI on the page's one element (a file, so the CSP needs no inline script).
INIT_SCRIPT = """window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    layout: "BaseLayout",
    deepLinking: true,
    showExtensions: true,
    showCommonExtensions: true,
    presets: [SwaggerUIBundle.presets.apis],
  });
});
"""

PAGE = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>citewall API</title>
<link rel="stylesheet" href="{ASSETS_PATH}/swagger-ui.css">
<link rel="icon" type="image/png" href="{ASSETS_PATH}/favicon.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{ASSETS_PATH}/swagger-ui-bundle.js"></script>
<script src="{ASSETS_PATH}/swagger-init.js"></script>
</body>
</html>
"""


def vendor_dir() -> Path:
    """Where the installed ``fastapi-offline`` package keeps Swagger UI's files."""
    return Path(str(files("fastapi_offline") / "static"))


def build_docs_router() -> APIRouter:
    """``/docs`` and its assets (hidden from the schema)."""
    router = APIRouter(include_in_schema=False)

    @router.get(DOCS_PATH)
    def docs_page() -> HTMLResponse:
        return HTMLResponse(PAGE)

    @router.get(f"{ASSETS_PATH}/swagger-init.js")
    def init_script() -> Response:
        return Response(INIT_SCRIPT, media_type="text/javascript")

    @router.get(ASSETS_PATH + "/{name}")
    def vendor_asset(name: str) -> FileResponse:
        media_type = VENDOR_ASSETS.get(name)
        if media_type is None:
            raise HTTPException(status_code=404, detail="not found")
        return FileResponse(vendor_dir() / name, media_type=media_type)

    return router
