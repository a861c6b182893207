"""How JSON responses are written, and the error responses declared in the OpenAPI schema (so
clients and fuzzers know every status).

Every error body is ``{"detail": ...}``: a message for the caller, or for 422 a list of
``{"loc", "msg", "type"}`` problems.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import JSONResponse
from pydantic import BaseModel

from citewall.text.cleaning import encodable


class EncodableJSONResponse(JSONResponse):
    """JSON that always encodes: a lone surrogate in a stored row (written before storage made
    text encodable, or by another tool) becomes U+FFFD instead of failing the response."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return encodable(text).encode("utf-8")


class ErrorPublic(BaseModel):
    """An error: a caller-safe message (never internal data)."""

    detail: str | list[dict[str, Any]]


_DESCRIPTIONS: dict[int, str] = {
    400: "The request body could not be parsed (e.g. not JSON).",
    401: "Missing, malformed, unknown, revoked or expired bearer token.",
    403: "Authenticated, but the role may not use this route (admin only).",
    404: "Unknown id, or not yours.",
    409: "The conversation is full (max messages reached), or has no answered question to "
    "answer again.",
    413: "The message or request body is over its limit.",
    429: "Over the per-member rate limit; see Retry-After.",
    502: "The answer generator failed; nothing was saved.",
    503: "A required part (database, vector store) is unavailable; nothing was saved.",
}

#: What every authenticated route may answer.
AUTHENTICATED = (401, 429, 503)


def error_responses(
    *codes: int, described: dict[int, str] | None = None
) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a router or route: each code with ``ErrorPublic`` and a description
    (the shared one, or the route's own from ``described``)."""
    texts = {**_DESCRIPTIONS, **(described or {})}
    return {
        code: {"model": ErrorPublic, "description": texts[code]}
        for code in (*codes, *(described or {}))
    }
