"""``EventStream`` on its own, driven as an ASGI server drives it: a client that disconnects
(an ``http.disconnect`` message, ASGI spec 2.3, what uvicorn speaks; or a send that fails,
spec 2.4) sets ``client_gone`` and the generator is closed at the ``yield`` it was paused on;
a stream that runs to its end is left alone."""

from __future__ import annotations

import threading
from collections.abc import Generator
from typing import Any

import anyio

from citewall.api.sse import EventStream, sse_event


class Recorder:
    """A generator of SSE frames that notes how it ended."""

    def __init__(self, frames: int) -> None:
        self.frames = frames
        self.sent = 0
        self.closed_at: int | None = None
        self.finished = False
        self.thread: str | None = None

    def events(self) -> Generator[str, None, None]:
        try:
            for i in range(self.frames):
                yield sse_event("token", {"delta": f"d{i}"})
                self.sent = i + 1
            self.finished = True
        except GeneratorExit:
            self.closed_at = self.sent
            self.thread = threading.current_thread().name
            raise


def serve(response: EventStream, spec: str, *, disconnect_after: int) -> list[dict[str, Any]]:
    """Run ``response`` as an ASGI server of ``spec`` would, with a client that goes away after
    ``disconnect_after`` body chunks. Returns the messages sent."""
    sent: list[dict[str, Any]] = []
    gone = anyio.Event()

    async def receive() -> dict[str, Any]:
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        bodies = sum(1 for m in sent if m["type"] == "http.response.body")
        if message["type"] == "http.response.body" and bodies >= disconnect_after:
            gone.set()
            if spec == "2.4":
                raise OSError("the client went away")
            await anyio.sleep(0.05)  # the server hears the disconnect while sending
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": spec}}

    async def main() -> None:
        await response(scope, receive, send)

    anyio.run(main)
    return sent


def test_a_disconnect_closes_the_generator_where_it_paused() -> None:
    for spec in ("2.3", "2.4"):
        recorder = Recorder(frames=50)
        gone = threading.Event()
        serve(EventStream(recorder.events(), gone), spec, disconnect_after=3)
        assert gone.is_set(), spec
        assert not recorder.finished and recorder.closed_at is not None, spec
        assert recorder.closed_at < 10, (spec, recorder.closed_at)
        # Closed in a worker thread, not on the event loop.
        assert recorder.thread != threading.main_thread().name, spec


def test_a_stream_that_ends_is_left_alone() -> None:
    recorder = Recorder(frames=3)
    gone = threading.Event()
    sent = serve(EventStream(recorder.events(), gone), "2.3", disconnect_after=99)
    assert recorder.finished and recorder.closed_at is None and not gone.is_set()
    bodies = [m["body"] for m in sent if m["type"] == "http.response.body"]
    assert b"".join(bodies).count(b"event: token") == 3 and bodies[-1] == b""
    start = next(m for m in sent if m["type"] == "http.response.start")
    assert (b"content-type", b"text/event-stream; charset=utf-8") in start["headers"]
