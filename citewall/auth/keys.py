"""Where a verifier's keys come from: a shared secret (HS256) or a JWKS (``jwks.JwksCache``).

A key source pins its algorithms, and every key it hands out is bound to one algorithm (a
``PyJWK``), so a token cannot pick how its signature is checked (no HS/RS confusion).
"""

from __future__ import annotations

from typing import Protocol

from jwt import PyJWK
from jwt.utils import base64url_encode


class KeySource(Protocol):
    """Keys for verifying tokens, each bound to its algorithm."""

    @property
    def algorithms(self) -> tuple[str, ...]:
        """The only ``alg`` values a token may carry."""
        ...

    def key_for(self, kid: str | None) -> PyJWK:
        """The key for the token's ``kid``; ``TokenRejected`` when there is none."""
        ...


class SharedSecret:
    """An HS256 secret shared with the host site (``CITEWALL_MEMBER_JWT_SECRET``)."""

    algorithms: tuple[str, ...] = ("HS256",)

    def __init__(self, secret: str) -> None:
        k = base64url_encode(secret.encode("utf-8")).decode("ascii")
        self._key = PyJWK({"kty": "oct", "k": k}, algorithm="HS256")

    def key_for(self, kid: str | None) -> PyJWK:
        """The secret, whatever ``kid`` the token names (there is one key)."""
        return self._key
