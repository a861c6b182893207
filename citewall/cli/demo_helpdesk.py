"""The demo's helpdesk: a receiver on 127.0.0.1 that checks each handoff's signature as
docs/handoff.md tells a receiver to, prints who asked, and answers 204. A stand-in for Zendesk
or Help Scout, so the demo shows a handoff delivered without any outside service."""

from __future__ import annotations

import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import typer

from citewall.handoff.signature import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify_signature

#: Largest body the demo helpdesk reads.
MAX_BODY = 1_000_000


class DemoHelpdesk:
    """A threaded HTTP receiver on a free loopback port, with a fresh signing secret."""

    def __init__(self) -> None:
        self.secret = secrets.token_hex(32)
        self.received: list[dict[str, Any]] = []
        helpdesk = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
                body = self.rfile.read(length)
                ok = verify_signature(
                    helpdesk.secret,
                    timestamp=self.headers.get(TIMESTAMP_HEADER, ""),
                    body=body,
                    signature_header=self.headers.get(SIGNATURE_HEADER, ""),
                    now=time.time(),
                )
                if ok:
                    helpdesk.take(json.loads(body))
                self.send_response(204 if ok else 401)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/handoff"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def take(self, handoff: dict[str, Any]) -> None:
        """Keep a verified handoff and say so on the console."""
        self.received.append(handoff)
        member = handoff.get("member", {}).get("name", "?")
        typer.echo(
            f"demo helpdesk: {member} asked for a person ({handoff.get('message') or 'no message'})"
            f" - {handoff.get('admin_url')}",
            err=True,
        )

    def start(self) -> DemoHelpdesk:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
