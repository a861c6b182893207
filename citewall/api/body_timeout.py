"""A deadline for the request body: ``CITEWALL_BODY_READ_TIMEOUT_S`` from the end of the headers.

uvicorn hands the app a request once its headers are in and then waits for the declared body
as long as the client keeps the connection open: its ``timeout_keep_alive`` runs only between
requests. A client that declares ``Content-Length: 1000`` and sends 10 bytes, or trickles one
byte now and then, would hold its connection (and the request's task) for ever. Here the whole
body must arrive by one deadline, not per read, so trickling does not reset it; past it the
read fails with a 408 and the connection is closed. Any response that starts before the body
has all arrived (a 408, a 413 on the declared length, a route that never reads its body) says
``Connection: close``, so the client cannot go on sending into a finished request.
"""

from __future__ import annotations

import anyio
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CLOSE = (b"connection", b"close")


def declares_body(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether request ``headers`` announce a body (a non-zero length, or chunked).

    >>> declares_body([(b"content-length", b"10")]), declares_body([(b"content-length", b"0")])
    (True, False)
    """
    for name, value in headers:
        if name == b"transfer-encoding":
            return True
        if name == b"content-length":
            return value.strip() not in {b"0", b""}
    return False


class BodyReadTimeoutMiddleware:
    """Fail a body read that is not done ``timeout_s`` after the request started: HTTP 408."""

    def __init__(self, app: ASGIApp, timeout_s: float) -> None:
        self.app = app
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        pending = declares_body(scope.get("headers", []))
        deadline = anyio.current_time() + self.timeout_s
        message = (
            f"the request body did not arrive within {self.timeout_s:g} s "
            "(CITEWALL_BODY_READ_TIMEOUT_S); send the whole body with the request"
        )

        async def bounded() -> Message:
            nonlocal pending
            if not pending:  # the body is in: what follows is waiting for a disconnect
                return await receive()
            with anyio.move_on_after(deadline - anyio.current_time()):
                received = await receive()
                if received["type"] != "http.request" or not received.get("more_body", False):
                    pending = False
                return received
            # An HTTPException: FastAPI passes it through from a body read, while it turns any
            # other exception there into a generic 400.
            raise HTTPException(status_code=408, detail=message, headers={"Connection": "close"})

        async def send_closing(reply: Message) -> None:
            if reply["type"] == "http.response.start" and pending:
                kept = [(k, v) for k, v in reply.get("headers", []) if k.lower() != CLOSE[0]]
                reply = {**reply, "headers": [*kept, CLOSE]}
            await send(reply)

        await self.app(scope, bounded, send_closing)
