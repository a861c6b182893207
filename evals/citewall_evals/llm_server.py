"""A scripted OpenAI-compatible HTTP server on 127.0.0.1: the stand-in for a remote LLM.

It is the one outer boundary citewall's tests and evaluation fake: everything downstream of the
model (reconciliation, enrichment, the URL firewall, the serve boundary, persistence) runs for
real against it. It serves ``POST /v1/chat/completions`` (JSON or SSE streaming, as the request
asks) and ``GET /v1/models``, binds to loopback only, and records every request.

What it answers is a policy: ``enqueue()`` scripted replies (a string, or a ``Reply`` with a
status, a raw body, a delay, explicit stream chunks), a ``responder`` function of the request
body (the adversarial model, ``redteam.adversary``, is one), else the ``default`` reply::

    with ScriptedOpenAIServer() as server:
        server.enqueue("Refunds take 5 days [1].")
        gen = OpenAICompatGenerator(base_url=server.base_url, model="fake")
        ...
        assert server.chat_requests[0]["messages"][0]["role"] == "system"
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from citewall.errors import UserError

LOOPBACK = frozenset({"127.0.0.1", "localhost"})


@dataclass
class Reply:
    """One scripted reply.

    ``text``: the assistant message (split into several SSE chunks when streaming).
    ``status``: HTTP status; a non-200 status sends ``body`` (or a JSON error).
    ``body``: raw body bytes/str sent as is (garbage, empty, HTML...); overrides ``text``.
    ``delay_s``: sleep before answering (to exceed a client timeout).
    ``content_type``: override the content type.
    ``chunks``: explicit SSE deltas (streaming only), instead of splitting ``text``.
    ``chunk_delay_s``: streaming only: pause after each SSE event, so deltas arrive over time.
    """

    text: str = ""
    status: int = 200
    body: bytes | str | None = None
    delay_s: float = 0.0
    content_type: str | None = None
    chunks: list[str] | None = None
    chunk_delay_s: float = 0.0


Responder = Callable[[dict[str, Any]], "Reply | str"]


class ScriptedOpenAIServer:
    """A real HTTP server on a free loopback port; use as a context manager."""

    def __init__(
        self,
        default: Reply | str = "I have no scripted reply.",
        model: str = "fake-model",
        *,
        responder: Responder | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        if host not in LOOPBACK:
            raise UserError(f"the scripted model binds to loopback only, not {host!r}")
        self.default = default
        self.model = model
        self.host = host
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self._queue: deque[Reply | str] = deque()
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -----------------------------------------------------------------------------
    def enqueue(self, *replies: Reply | str) -> None:
        with self._lock:
            self._queue.extend(replies)

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            item: Reply | str | None = self._queue.popleft() if self._queue else None
        if item is None:
            item = self.responder(body) if self.responder is not None else self.default
        return Reply(text=item) if isinstance(item, str) else item

    # -- lifecycle -----------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._httpd is not None
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> ScriptedOpenAIServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def _send(self, status: int, body: bytes, ctype: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                server.requests.append(
                    {
                        "method": "GET",
                        "path": self.path,
                        "body": None,
                        "headers": dict(self.headers),
                    }
                )
                if self.path.rstrip("/") == "/v1/models":
                    payload = {"object": "list", "data": [{"id": server.model, "object": "model"}]}
                    self._send(200, json.dumps(payload).encode(), "application/json")
                else:
                    self._send(404, b'{"error": "not found"}', "application/json")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                    if not isinstance(body, dict) or not isinstance(body.get("messages", []), list):
                        raise ValueError("not a chat request (messages must be a list)")
                except ValueError as exc:
                    message = json.dumps({"error": {"message": f"bad request: {exc}"}})
                    self._send(400, message.encode(), "application/json")
                    return
                server.requests.append(
                    {
                        "method": "POST",
                        "path": self.path,
                        "body": body,
                        "headers": dict(self.headers),
                    }
                )
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, b'{"error": "not found"}', "application/json")
                    return
                reply = server._next(body)
                if reply.delay_s:
                    server._release.wait(reply.delay_s)
                try:
                    self._answer(reply, bool(body.get("stream")))
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up (timeout tests)

            def _answer(self, reply: Reply, stream: bool) -> None:
                if reply.body is not None or reply.status != 200:
                    raw = (
                        reply.body
                        if reply.body is not None
                        else json.dumps({"error": {"message": f"scripted status {reply.status}"}})
                    )
                    data = raw.encode() if isinstance(raw, str) else raw
                    self._send(reply.status, data, reply.content_type or "application/json")
                    return
                if not stream:
                    payload = {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": server.model,
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": reply.text},
                            }
                        ],
                    }
                    self._send(200, json.dumps(payload).encode(), "application/json")
                    return
                chunks = reply.chunks if reply.chunks is not None else _split(reply.text)
                events = [{"choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
                events += [{"choices": [{"index": 0, "delta": {"content": c}}]} for c in chunks]
                events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                parts = [
                    b"data: " + json.dumps({"id": "chatcmpl-fake", **e}).encode() + b"\n\n"
                    for e in events
                ] + [b"data: [DONE]\n\n"]
                if reply.chunk_delay_s:
                    self._send_slowly(parts, reply)
                    return
                self._send(200, b"".join(parts), reply.content_type or "text/event-stream")

            def _send_slowly(self, parts: list[bytes], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", reply.content_type or "text/event-stream")
                self.send_header("Content-Length", str(sum(len(p) for p in parts)))
                self.end_headers()
                for part in parts:
                    self.wfile.write(part)
                    self.wfile.flush()
                    server._release.wait(reply.chunk_delay_s)

        self._httpd = ThreadingHTTPServer((self.host, 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()  # wake any handler sleeping on a "hang" reply
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the chat-completion requests received, in order."""
        return [r["body"] for r in self.requests if r["path"].startswith("/v1/chat/completions")]


def _split(text: str, size: int = 7) -> list[str]:
    """Split a reply into small deltas, the way a real server streams tokens."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
