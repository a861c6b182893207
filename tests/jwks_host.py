"""A host site's signing side for sign-in tests: real RSA and EC keys made in the test, a JWKS
served over HTTP by a local threaded server, and tokens signed with those keys.

``JwksHost`` serves one JWKS per path (``host.url("member")``); each path's keys can be swapped
mid-run (key rotation) and a path can be made slow. Bounded: 127.0.0.1 only, daemon handler
threads, and ``close()`` stops it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm
from jwt.utils import base64url_encode


@dataclass(frozen=True)
class SigningKey:
    """A private key, its kid and algorithm, and its public JWK."""

    kid: str
    alg: str
    private: Any

    @property
    def jwk(self) -> dict[str, Any]:
        public = self.private.public_key()
        to_jwk = RSAAlgorithm.to_jwk if self.alg == "RS256" else ECAlgorithm.to_jwk
        entry: dict[str, Any] = dict(to_jwk(public, as_dict=True))  # type: ignore[arg-type]
        return {**entry, "kid": self.kid, "use": "sig", "alg": self.alg}

    @property
    def public_pem(self) -> bytes:
        return self.private.public_key().public_bytes(  # type: ignore[no-any-return]
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )


def rsa_key(kid: str) -> SigningKey:
    return SigningKey(kid, "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))


def ec_key(kid: str) -> SigningKey:
    return SigningKey(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))


def claims(issuer: str, audience: str, subject: str, **extra: Any) -> dict[str, Any]:
    """Good claims issued now for 5 minutes with a fresh ``jti`` (a host token signs in once);
    ``extra`` overrides (None removes a claim)."""
    now = int(time.time())
    base: dict[str, Any] = {"iss": issuer, "aud": audience, "sub": subject, "iat": now}
    base["exp"] = now + 300
    base["jti"] = uuid.uuid4().hex
    base.update(extra)
    return {k: v for k, v in base.items() if v is not None}


def sign(key: SigningKey, payload: dict[str, Any], kid: str | None = None) -> str:
    """``payload`` signed with ``key`` (header kid: ``kid`` or the key's own)."""
    return jwt.encode(payload, key.private, algorithm=key.alg, headers={"kid": kid or key.kid})


def _segment(data: dict[str, Any]) -> str:
    return base64url_encode(json.dumps(data, separators=(",", ":")).encode()).decode()


def unsigned(payload: dict[str, Any], kid: str) -> str:
    """An ``alg: none`` token (no signature)."""
    return f"{_segment({'alg': 'none', 'typ': 'JWT', 'kid': kid})}.{_segment(payload)}."


def hs256_with(secret: bytes, payload: dict[str, Any], kid: str) -> str:
    """An HS256 token keyed with ``secret`` (e.g. an RSA public key's PEM: the HS/RS confusion
    attack, which PyJWT's own encoder refuses to produce)."""
    head = f"{_segment({'alg': 'HS256', 'typ': 'JWT', 'kid': kid})}.{_segment(payload)}"
    mac = hmac.new(secret, head.encode(), hashlib.sha256).digest()
    return f"{head}.{base64url_encode(mac).decode()}"


def tamper_payload(token: str, **changes: Any) -> str:
    """``token`` with its payload changed and its signature kept."""
    head, payload, signature = token.split(".")
    decoded = json.loads(jwt.utils.base64url_decode(payload))
    return f"{head}.{_segment({**decoded, **changes})}.{signature}"


def tamper_signature(token: str) -> str:
    """``token`` with one character in the middle of its signature changed."""
    head, payload, signature = token.split(".")
    i = len(signature) // 2
    flipped = "A" if signature[i] != "A" else "B"
    return f"{head}.{payload}.{signature[:i]}{flipped}{signature[i + 1 :]}"


#: The order of P-256, the curve of ES256 keys.
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def twin_es256(token: str) -> str:
    """Another string that is the same valid ES256 token: its signature (r, s) as (r, n - s),
    which ECDSA verification accepts just as well (signature malleability)."""
    head, payload, signature = token.split(".")
    raw = jwt.utils.base64url_decode(signature)
    r, s = raw[:32], int.from_bytes(raw[32:], "big")
    flipped = r + (P256_ORDER - s).to_bytes(32, "big")
    return f"{head}.{payload}.{base64url_encode(flipped).decode()}"


class QuietServer(ThreadingHTTPServer):
    """Daemon handler threads; a client that gave up (a timeout test) is not an error."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


@dataclass
class JwksHost:
    """A local HTTP server serving JWKS documents by path, counting fetches."""

    jwks: dict[str, list[SigningKey]] = field(default_factory=dict)
    delay_s: dict[str, float] = field(default_factory=dict)
    fetches: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                name = self.path.strip("/").removesuffix("/jwks.json")
                keys = host.jwks.get(name)
                host.fetches[name] = host.fetches.get(name, 0) + 1
                time.sleep(host.delay_s.get(name, 0.0))
                if keys is None:
                    self.send_error(404)
                    return
                body = json.dumps({"keys": [k.jwk for k in keys]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet test output

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/{name}/jwks.json"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def closed_port_url() -> str:
    """A JWKS URL on a port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/jwks.json"
