"""A host site for the embed tests: a page that includes citewall's `embed.js`, a sign-in of its
own (a first-party cookie naming the member), and the token endpoint a real site would have,
which signs a short-lived HS256 JWT for its signed-in member."""

from __future__ import annotations

import html
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import jwt

ISSUER = "https://host.example"
AUDIENCE = "citewall"
TOKEN_LIFE_S = 300


@dataclass
class HostSite:
    """The host site: where it is, the citewall it embeds, the secret it shares with that
    citewall, and the members its token endpoint was asked for ("" when nobody was signed in)."""

    origin: str
    secret: str
    citewall_url: str = ""
    token_requests: list[str] = field(default_factory=list)

    def page(self) -> str:
        src = html.escape(f"{self.citewall_url}/embed.js")
        return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Host help centre</title></head>
<body style="margin:0">
<h1>Help centre</h1>
<div id="citewall-chat"></div>
<script src="{src}" data-target="#citewall-chat" data-token-url="/citewall/token" async></script>
</body></html>"""

    def token_for(self, member: str) -> str:
        """What the host's backend does for its signed-in member: sign a short-lived JWT."""
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "aud": AUDIENCE,
            "sub": f"member-{member}",
            "name": member,
            "iat": now,
            "exp": now + TOKEN_LIFE_S,
            "jti": secrets.token_urlsafe(16),  # a host token signs in once
        }
        return jwt.encode(claims, self.secret, algorithm="HS256")


def _handler(site: HostSite) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

        def send(self, status: int, body: str, kind: str, headers: dict[str, str]) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            cookie = SimpleCookie(self.headers.get("Cookie", ""))
            member = cookie["member"].value if "member" in cookie else None
            if url.path == "/":
                self.send(200, site.page(), "text/html; charset=utf-8", {})
            elif url.path == "/login":
                who = parse_qs(url.query).get("as", [""])[0]
                self.send(302, "", "text/plain", {"Location": "/", "Set-Cookie": f"member={who}"})
            elif url.path == "/logout":
                gone = "member=; Max-Age=0"
                self.send(302, "", "text/plain", {"Location": "/", "Set-Cookie": gone})
            elif url.path == "/citewall/token":
                site.token_requests.append(member or "")
                if not member:
                    self.send(401, '{"detail": "sign in"}', "application/json", {})
                    return
                body = f'{{"token": "{site.token_for(member)}"}}'
                self.send(200, body, "application/json", {})
            else:
                self.send(404, "not found", "text/plain", {})

    return Handler


@contextmanager
def host_site(secret: str) -> Iterator[HostSite]:
    """Serve a host site at http://localhost:<port>: another site than citewall's 127.0.0.1.
    Set its ``citewall_url`` before a page is asked for."""
    site = HostSite("", secret)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(site))
    site.origin = f"http://localhost:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
