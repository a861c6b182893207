"""A help center served on 127.0.0.1: what the crawl tests and ``citewall bench crawl`` read.

A real HTTP server (``ThreadingHTTPServer``) on loopback only, serving a dict of routes by
path. Every 200 carries an ``ETag`` and a ``Last-Modified`` and honours ``If-None-Match`` /
``If-Modified-Since`` with a 304, as a help center behind any web server does; a route can
instead redirect, answer another status, or wait before answering (a host that hangs). Every
request is logged (method, path, status, the conditional headers it carried).

    with HelpSite({"/a": Route(page("A", "<p>...</p>"))}) as site:
        site.url("/a")       # http://127.0.0.1:<port>/a
        site.requests        # [Request("GET", "/a", 200, conditional=False)]
"""

from __future__ import annotations

import hashlib
import html
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self

#: Last-Modified of every page (the server's pages do not change while it runs).
LAST_MODIFIED = "Mon, 01 Jan 2024 00:00:00 GMT"


@dataclass(frozen=True, slots=True)
class Route:
    """What one path answers. ``location`` makes a redirect (with ``status`` 301 by default);
    ``delay_s`` waits before answering (cut short when the server closes); ``headers`` are sent
    as well (a ``Content-Encoding`` with a body already encoded)."""

    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    location: str | None = None
    delay_s: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str
    status: int
    conditional: bool
    #: The request's Accept-Encoding header, "" without one.
    accept_encoding: str = ""


def page(title: str, main: str, *, canonical: str | None = None) -> bytes:
    """A help-center page: ``main`` (HTML) inside the site's navigation, sidebar and footer."""
    link = f'<link rel="canonical" href="{html.escape(canonical)}">' if canonical else ""
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)} | Example Help Center</title>{link}</head><body>"
        "<header><nav><a href='/'>Help Center</a> <a href='/guides/'>Guides</a> "
        "<a href='/contact'>Contact support</a> <a href='/status'>System status</a></nav></header>"
        "<aside><h3>Popular articles</h3><ul><li>Getting started</li><li>Billing FAQ</li>"
        "<li>Account security</li></ul></aside>"
        f"<main><article><h1>{html.escape(title)}</h1>{main}</article></main>"
        "<footer><p>Copyright 2024 Example Inc. All rights reserved.</p>"
        "<p><a href='/privacy'>Privacy</a> <a href='/terms'>Terms</a></p></footer>"
        "</body></html>"
    ).encode()


def sitemap(urls: Iterable[str], *, index: bool = False) -> bytes:
    """A sitemap (``urlset``) of page URLs, or with ``index`` a sitemap index of sitemaps."""
    root, entry = ("sitemapindex", "sitemap") if index else ("urlset", "url")
    items = "".join(f"<{entry}><loc>{html.escape(u)}</loc></{entry}>" for u in urls)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<{root} xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</{root}>'
    ).encode()


XML = "application/xml"


class HelpSite:
    """The server (module docstring). ``routes`` may be changed while it runs."""

    def __init__(self, routes: Mapping[str, Route] | None = None) -> None:
        self.routes: dict[str, Route] = dict(routes or {})
        self.requests: list[Request] = []
        self._closing = threading.Event()
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site._answer(self)

            def log_message(self, format: str, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        """The URL of ``path``; ``host="localhost"`` names the same server as another host."""
        return f"http://{host}:{self.port}{path}"

    def hits(self, path: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def _log(self, handler: BaseHTTPRequestHandler, status: int) -> None:
        conditional = bool(
            handler.headers.get("If-None-Match") or handler.headers.get("If-Modified-Since")
        )
        with self._lock:
            accept = handler.headers.get("Accept-Encoding", "")
            self.requests.append(Request("GET", handler.path, status, conditional, accept))

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        route = self.routes.get(handler.path)
        if route is None:
            self._send(handler, 404, b"<h1>Not found</h1>", "text/html", {})
            return
        if route.delay_s and self._closing.wait(route.delay_s):
            return
        if route.location is not None:
            status = route.status if route.status != 200 else 301
            self._send(handler, status, b"", "text/html", {"Location": route.location})
            return
        etag = '"' + hashlib.sha256(route.body).hexdigest()[:16] + '"'
        validators = {"ETag": etag, "Last-Modified": LAST_MODIFIED}
        if route.status == 200 and handler.headers.get("If-None-Match") == etag:
            self._send(handler, 304, b"", None, validators)
            return
        headers = validators | dict(route.headers)
        self._send(handler, route.status, route.body, route.content_type, headers)

    def _send(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        body: bytes,
        content_type: str | None,
        headers: Mapping[str, str],
    ) -> None:
        self._log(handler, status)
        handler.send_response(status)
        if content_type is not None:
            handler.send_header("Content-Type", content_type)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if body:
            handler.wfile.write(body)

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
