"""Server-sent events: the frame (``event: NAME`` + one ``data:`` line of JSON) and the response
that serves a stream of them from a sync generator, telling it when the client went away.

Starlette iterates a sync generator in worker threads. When the client disconnects it cancels
that iteration once the ``next()`` in flight returns, and drops the generator unclosed: it is
closed whenever it is garbage-collected, on whatever thread that happens to be. ``EventStream``
makes the end deterministic: ``client_gone`` is set as soon as the server hears the disconnect
(a generator can check it between deltas), and when the response is over, however it ended,
the generator is closed in a worker thread, shielded from the cancellation, so one cut short
gets ``GeneratorExit`` at the ``yield`` it was paused on and can store what it has.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Generator
from typing import Any

import anyio
from starlette.requests import ClientDisconnect
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from citewall.text.cleaning import encodable


def sse_event(event: str, data: dict[str, Any]) -> str:
    """One SSE frame. JSON escapes newlines, so the payload always fits on one data line."""
    payload = encodable(json.dumps(data, ensure_ascii=False, default=str))
    return f"event: {event}\ndata: {payload}\n\n"


class EventStream(StreamingResponse):
    """``text/event-stream`` from ``events``; ``client_gone`` is set when the client disconnects
    (pass the same event to the generator), and ``events`` is always closed at the end."""

    def __init__(self, events: Generator[str, None, None], client_gone: threading.Event) -> None:
        super().__init__(
            events,
            media_type="text/event-stream",
            headers={"X-Accel-Buffering": "no"},  # no-store comes from the headers middleware
        )
        self._events = events
        self.client_gone = client_gone

    async def listen_for_disconnect(self, receive: Receive) -> None:
        await super().listen_for_disconnect(receive)
        self.client_gone.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except ClientDisconnect:
            # ASGI servers of spec 2.4 report the disconnect as a failed send instead: the
            # client going away ends the stream, it is not a server error.
            self.client_gone.set()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self._events.close)
