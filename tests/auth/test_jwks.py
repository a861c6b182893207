"""The JWKS cache against a real local JWKS server: caching, key rotation with one refetch, at
most one refetch per 10 s (a flood of random kids), cached keys kept when a refetch fails,
down and slow endpoints, keys refused for their type, one fetch under concurrent first use."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from jwks_host import JwksHost, SigningKey, closed_port_url

from citewall.auth.jwks import JwksCache, parse_jwks
from citewall.auth.rejection import TokenRejected
from citewall.errors import ServiceUnavailableError


class Clock:
    """Seconds that move only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def path() -> str:
    return f"jwks-{uuid.uuid4().hex[:8]}"


def cache_for(host: JwksHost, path: str, clock: Clock, **kw: float) -> JwksCache:
    kw.setdefault("timeout_s", 2.0)
    kw.setdefault("cache_s", 300)
    return JwksCache(host.url(path), clock=clock, **kw)


def test_keys_are_fetched_once_and_bound_to_their_algorithm(
    jwks_host: JwksHost, signing_keys: dict[str, SigningKey], path: str
) -> None:
    jwks_host.jwks[path] = [signing_keys["rsa"], signing_keys["ec"]]
    cache = cache_for(jwks_host, path, Clock())
    assert cache.key_for("host-rsa-1").algorithm_name == "RS256"
    assert cache.key_for("host-ec-1").algorithm_name == "ES256"
    assert jwks_host.fetches[path] == 1


def test_rotation_needs_one_refetch_and_refetches_are_paced(
    jwks_host: JwksHost, signing_keys: dict[str, SigningKey], path: str
) -> None:
    clock = Clock()
    jwks_host.jwks[path] = [signing_keys["rsa"]]
    cache = cache_for(jwks_host, path, clock)
    cache.key_for("host-rsa-1")
    jwks_host.jwks[path] = [signing_keys["rotated"]]  # new kid served, old removed
    clock.now += 3
    with pytest.raises(TokenRejected) as info:  # within 10 s of the last fetch: no refetch
        cache.key_for("host-rsa-2")
    assert info.value.reason == "unknown_key" and jwks_host.fetches[path] == 1
    clock.now += 7
    assert cache.key_for("host-rsa-2").algorithm_name == "RS256"
    assert jwks_host.fetches[path] == 2
    with pytest.raises(TokenRejected) as old:
        cache.key_for("host-rsa-1")
    assert old.value.reason == "unknown_key" and jwks_host.fetches[path] == 2


def test_a_flood_of_random_kids_fetches_at_most_once_per_10_s(
    jwks_host: JwksHost, signing_keys: dict[str, SigningKey], path: str
) -> None:
    clock = Clock()
    jwks_host.jwks[path] = [signing_keys["rsa"]]
    cache = cache_for(jwks_host, path, clock)
    for _ in range(200):
        clock.now += 0.1  # 20 s in all
        with pytest.raises(TokenRejected):
            cache.key_for(uuid.uuid4().hex)
    assert jwks_host.fetches[path] <= 3


def test_a_stale_set_is_refetched_and_a_failed_refetch_keeps_the_cached_keys(
    jwks_host: JwksHost,
    signing_keys: dict[str, SigningKey],
    path: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    jwks_host.jwks[path] = [signing_keys["rsa"]]
    cache = cache_for(jwks_host, path, clock, cache_s=60)
    cache.key_for("host-rsa-1")
    clock.now += 61
    cache.key_for("host-rsa-1")
    assert jwks_host.fetches[path] == 2
    del jwks_host.jwks[path]  # the host now answers 404
    clock.now += 61
    assert cache.key_for("host-rsa-1").algorithm_name == "RS256"
    assert jwks_host.fetches[path] == 3
    assert "keeping 1 cached key(s)" in caplog.text
    with pytest.raises(TokenRejected) as info:  # an unknown kid while the host is failing
        cache.key_for("host-rsa-9")
    assert info.value.reason == "jwks_unavailable"


def test_down_and_slow_endpoints_are_jwks_unavailable(
    jwks_host: JwksHost, signing_keys: dict[str, SigningKey], path: str
) -> None:
    down = JwksCache(closed_port_url(), timeout_s=0.5, cache_s=300)
    with pytest.raises(TokenRejected) as info:
        down.key_for("host-rsa-1")
    assert info.value.reason == "jwks_unavailable"

    jwks_host.jwks[path] = [signing_keys["rsa"]]
    jwks_host.delay_s[path] = 1.5
    slow = cache_for(jwks_host, path, Clock(), timeout_s=0.2)
    started = time.monotonic()
    with pytest.raises(TokenRejected) as info:
        slow.key_for("host-rsa-1")
    assert info.value.reason == "jwks_unavailable"
    assert time.monotonic() - started < 1.2  # the timeout, not the server's pace


def test_a_token_without_kid_names_no_key(jwks_host: JwksHost, path: str) -> None:
    with pytest.raises(TokenRejected) as info:
        cache_for(jwks_host, path, Clock()).key_for(None)
    assert info.value.reason == "unknown_key" and path not in jwks_host.fetches


def test_concurrent_first_use_fetches_once(
    jwks_host: JwksHost, signing_keys: dict[str, SigningKey], path: str
) -> None:
    jwks_host.jwks[path] = [signing_keys["rsa"]]
    jwks_host.delay_s[path] = 0.2
    cache = cache_for(jwks_host, path, Clock())
    barrier = threading.Barrier(8)
    found: list[str] = []

    def use() -> None:
        barrier.wait(timeout=10)
        found.append(cache.key_for("host-rsa-1").algorithm_name)

    threads = [threading.Thread(target=use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert found == ["RS256"] * 8 and jwks_host.fetches[path] == 1


def test_only_rs256_and_es256_signing_keys_are_kept(signing_keys: dict[str, SigningKey]) -> None:
    rsa, ec = signing_keys["rsa"].jwk, signing_keys["ec"].jwk
    document = {
        "keys": [
            {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"},  # a symmetric key: never
            {**rsa, "kid": "rsa-as-es", "alg": "ES256"},  # its alg disagrees with its type
            {**rsa, "kid": "rsa-enc", "use": "enc"},
            {k: v for k, v in rsa.items() if k != "kid"},
            {**ec, "kid": "p384", "crv": "P-384"},
            "not a key",
            {**rsa, "kid": "good-rsa"},
            {**ec, "kid": "good-ec"},
        ]
    }
    assert sorted(parse_jwks(document)) == ["good-ec", "good-rsa"]
    for bad in ({"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "h"}]}, {"no": "keys"}, []):
        with pytest.raises(ServiceUnavailableError):
            parse_jwks(bad)
