"""A helpdesk stand-in for handoff tests: a threaded HTTP server on 127.0.0.1 that checks each
delivery's signature the way docs/handoff.md tells a receiver to, and keeps what it accepted.

It can be stopped and started again on the same port (the helpdesk going down and coming
back), made to answer a status of the test's choosing, and made slow. Bounded: loopback only,
daemon threads, ``stop()`` ends it.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from citewall.handoff.signature import (
    ID_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    verify_signature,
)


@dataclass
class Received:
    """One request the receiver got: its handoff id, parsed body, and whether it verified."""

    handoff_id: str
    body: dict[str, Any]
    verified: bool


@dataclass
class Receiver:
    """The helpdesk stand-in. ``status`` is what it answers a verified delivery with."""

    secret: str
    port: int = 0
    status: int = 200
    delay_s: float = 0.0
    #: Seconds the timestamp may be from the receiver's clock (``clock`` gives it).
    tolerance_s: float = 300.0
    clock: Any = time.time
    received: list[Received] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/handoff"

    def accepted(self) -> list[str]:
        """Handoff ids the receiver accepted (verified and answered 2xx), in order."""
        with self._lock:
            return [r.handoff_id for r in self.received if r.verified]

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                ok = verify_signature(
                    receiver.secret,
                    timestamp=self.headers.get(TIMESTAMP_HEADER, ""),
                    body=body,
                    signature_header=self.headers.get(SIGNATURE_HEADER, ""),
                    now=receiver.clock(),
                    tolerance_s=receiver.tolerance_s,
                )
                if receiver.delay_s:
                    time.sleep(receiver.delay_s)
                status = receiver.status if ok else 401
                with receiver._lock:
                    receiver.received.append(
                        Received(
                            self.headers.get(ID_HEADER, ""),
                            json.loads(body) if ok else {},
                            ok and 200 <= status < 300,
                        )
                    )
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop answering: the port refuses connections until ``start()`` again."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
