"""A JWKS (JSON Web Key Set) fetched over HTTP and cached: the keys of RS256/ES256 tokens.

Rules (docs/sign-in.md): the set is used for ``cache_s`` seconds, then refetched; a token naming
an unknown ``kid`` triggers one refetch (key rotation), but fetches happen at most once per
``min_refetch_s`` (10 s), so a flood of tokens with random kids cannot hammer the host; a fetch
that fails or times out (``timeout_s``) keeps the keys already cached. Thread-safe: one lock
guards the set and serialises fetches.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
from jwt import PyJWK
from jwt.exceptions import PyJWTError

from citewall.auth.rejection import TokenRejected
from citewall.errors import ServiceUnavailableError

log = logging.getLogger("citewall.auth")

#: The algorithm each key type verifies: a key is used for that one only.
ALGORITHM_FOR_KEY_TYPE = {"RSA": "RS256", "EC": "ES256"}
#: Largest JWKS document read (real ones are a few kB).
MAX_JWKS_BYTES = 256 * 1024
#: Fewest seconds between two fetches of one JWKS.
MIN_REFETCH_S = 10.0


def parse_jwks(document: Any) -> dict[str, PyJWK]:
    """The usable signing keys of a JWKS document by ``kid``: RSA keys for RS256, P-256 EC keys
    for ES256. Keys without a kid, for encryption, of another type or whose own ``alg``
    disagrees with their type are skipped; ``ServiceUnavailableError`` when none is left."""
    entries = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise ServiceUnavailableError("the JWKS has no 'keys' list")
    keys: dict[str, PyJWK] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("kid"), str):
            continue
        algorithm = ALGORITHM_FOR_KEY_TYPE.get(entry.get("kty", ""))
        if algorithm is None or entry.get("alg", algorithm) != algorithm:
            continue
        if entry.get("use", "sig") != "sig" or entry.get("crv", "P-256") != "P-256":
            continue
        try:
            keys[entry["kid"]] = PyJWK(entry, algorithm=algorithm)
        except PyJWTError:
            continue
    if not keys:
        raise ServiceUnavailableError("the JWKS has no usable RS256 or ES256 signing key")
    return keys


def fetch_jwks(url: str, timeout_s: float) -> dict[str, PyJWK]:
    """GET the JWKS at ``url`` and parse it; ``ServiceUnavailableError`` naming what failed."""
    try:
        with httpx.stream("GET", url, timeout=timeout_s, follow_redirects=False) as response:
            response.raise_for_status()
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_JWKS_BYTES:
                    raise ServiceUnavailableError(f"the JWKS is over {MAX_JWKS_BYTES} bytes")
        return parse_jwks(json.loads(body))
    except httpx.HTTPError as exc:
        raise ServiceUnavailableError(f"fetching the JWKS failed: {type(exc).__name__}") from exc
    except ValueError as exc:
        raise ServiceUnavailableError("the JWKS is not JSON") from exc


class JwksCache:
    """The keys of one JWKS URL, fetched on first use and kept as the module docstring says.

    ``clock`` is seconds on any steady scale (tests move it on to pass the refetch interval).
    """

    algorithms: tuple[str, ...] = ("RS256", "ES256")

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float,
        cache_s: float,
        clock: Callable[[], float] = time.monotonic,
        min_refetch_s: float = MIN_REFETCH_S,
    ) -> None:
        self.url = url
        self._timeout_s = timeout_s
        self._cache_s = cache_s
        self._clock = clock
        self._min_refetch_s = min_refetch_s
        self._lock = threading.Lock()
        self._keys: dict[str, PyJWK] = {}
        self._fetched_at: float | None = None  # the last fetch that worked
        self._attempted_at: float | None = None  # the last fetch, whatever its outcome
        self._last_failed = False

    def key_for(self, kid: str | None) -> PyJWK:
        """The key ``kid`` names, refetching the set when it is stale or lacks that kid.

        ``TokenRejected`` with ``unknown_key`` (no kid, or not in the set) or
        ``jwks_unavailable`` (the set could not be fetched and holds no such key).
        """
        if kid is None:
            raise TokenRejected("unknown_key", "the token names no key (no kid)")
        with self._lock:
            now = self._clock()
            if self._fetched_at is None or now - self._fetched_at >= self._cache_s:
                self._refetch(now)
            if kid not in self._keys:
                self._refetch(now)  # key rotation; a no-op within min_refetch_s of the last
            key = self._keys.get(kid)
            if key is not None:
                return key
            if self._last_failed:
                raise TokenRejected("jwks_unavailable", f"the JWKS at {self.url} is unavailable")
            raise TokenRejected("unknown_key", f"kid {kid[:64]!r} is not in the JWKS")

    def _refetch(self, now: float) -> None:
        if self._attempted_at is not None and now - self._attempted_at < self._min_refetch_s:
            return
        self._attempted_at = now
        try:
            keys = fetch_jwks(self.url, self._timeout_s)
        except ServiceUnavailableError as exc:
            self._last_failed = True
            log.warning("JWKS %s: %s; keeping %d cached key(s)", self.url, exc, len(self._keys))
            return
        self._keys, self._fetched_at, self._last_failed = keys, now, False
