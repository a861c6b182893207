"""Request limits: message length, conversation length and a per-member rate limit.

The limit errors (``citewall.errors``) are ``LimitError`` subclasses so the HTTP mapping
(``api/errors.py``) can give each its own status code; the conversation-length rule belongs to
a turn (``chat.turn.check_conversation_room``). The sliding window is a small pure-ish class
with an injectable clock.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from citewall.config import Settings
from citewall.errors import MessageTooLongError, RateLimitedError


def check_message_length(message: str, max_chars: int) -> None:
    """Raise ``MessageTooLongError`` naming the limit when ``message`` is too long."""
    if len(message) > max_chars:
        raise MessageTooLongError(
            f"message is {len(message)} characters; the limit is {max_chars} "
            "(CITEWALL_MAX_MESSAGE_CHARS)"
        )


class RateLimiter(Protocol):
    """What the API asks of a rate limiter: in-process here, shared in ``shared_limiter``."""

    def hit(self, key: str) -> None:
        """Record one request for ``key``; raise ``RateLimitedError`` when over the limit."""
        ...

    def status(self) -> dict[str, object]:
        """For ``/readyz``: whether the limiter works, and whether replicas share it."""
        ...


class SlidingWindowLimiter:
    """At most ``limit`` hits per key in any ``window_s`` window; ``limit == 0`` disables.

    In-process: with several workers or replicas each enforces its own window, so N of them
    allow N times the limit; ``CITEWALL_REDIS_URL`` shares one window (``shared_limiter``).
    """

    def __init__(
        self, limit: int, window_s: float = 60.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit
        self.window_s = window_s
        self._clock = clock
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def hit(self, key: str) -> None:
        """Record one request for ``key`` or raise ``RateLimitedError`` with a Retry-After."""
        if self.limit <= 0:
            return
        now = self._clock()
        with self._lock:
            hits = self._hits.setdefault(key, deque())
            while hits and hits[0] <= now - self.window_s:
                hits.popleft()
            if len(hits) >= self.limit:
                retry_after = max(1.0, math.ceil(hits[0] + self.window_s - now))
                raise RateLimitedError(
                    f"rate limit of {self.limit} requests per minute reached "
                    "(CITEWALL_RATE_LIMIT_PER_MINUTE); retry later",
                    retry_after_s=retry_after,
                )
            hits.append(now)
            # Forget idle keys so a stream of one-off tokens cannot grow the table forever.
            if len(self._hits) > 10_000:
                self._hits = {
                    k: v for k, v in self._hits.items() if v and v[-1] > now - self.window_s
                }

    def status(self) -> dict[str, object]:
        """Always working; never shared."""
        return {"ok": True, "shared": False}


def body_limit(settings: Settings) -> int:
    """Largest request body accepted: room for the longest message with heavy JSON escaping
    (up to 12 bytes for one character, an escaped surrogate pair) plus the other fields."""
    return 12 * settings.max_message_chars + 16_384


#: The route that carries a document (base64) in its body: it has a limit of its own.
UPLOADS_PATH = "/api/v1/admin/uploads"


def upload_body_limit(settings: Settings) -> int:
    """Largest body of an upload: the largest document as base64 (4 bytes per 3) plus the
    other fields.

    >>> upload_body_limit(Settings(upload_max_bytes=3_000))
    20384
    """
    return 4 * math.ceil(settings.upload_max_bytes / 3) + 16_384


class BodySizeLimitMiddleware:
    """Refuse oversized bodies before anything parses them.

    A declared ``Content-Length`` over the limit is answered 413 at once; a chunked body is
    counted as it arrives and the read fails with a 413 once over. ``upload_max_bytes``: the
    limit of the uploads route's body instead (None: the same as every route's).
    """

    def __init__(self, app: ASGIApp, max_bytes: int, upload_max_bytes: int | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.upload_max_bytes = upload_max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        max_bytes = self.max_bytes
        message = (
            f"request body over {max_bytes} bytes; messages are limited to "
            "CITEWALL_MAX_MESSAGE_CHARS characters"
        )
        if self.upload_max_bytes is not None and scope.get("path") == UPLOADS_PATH:
            max_bytes = self.upload_max_bytes
            message = (
                f"request body over {max_bytes} bytes; uploaded documents are limited to "
                "CITEWALL_UPLOAD_MAX_BYTES bytes"
            )
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > max_bytes:
                    await JSONResponse({"detail": message}, status_code=413)(scope, receive, send)
                    return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > max_bytes:
                    # An HTTPException: FastAPI passes it through from a body read, while it
                    # turns any other exception there into a generic 400.
                    raise HTTPException(status_code=413, detail=message)
            return msg

        await self.app(scope, counted, send)
