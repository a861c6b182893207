"""The JWT verifier's rules on real keys (its refusals through the API are in
tests/api/test_bad_tokens.py): typed claims from RS256, ES256 and HS256 tokens, a key used only
for its own algorithm, and any single-byte change of a good token refused (property)."""

from __future__ import annotations

import uuid

import jwt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jwks_host import JwksHost, SigningKey, claims, sign
from testenv import examples

from citewall.auth.jwks import JwksCache
from citewall.auth.keys import SharedSecret
from citewall.auth.rejection import TokenRejected
from citewall.auth.verifier import JwtVerifier

ISS, AUD = "https://host.test", "citewall-members"
SECRET = "s" * 40


@pytest.fixture(scope="module")
def jwks_verifier(jwks_host: JwksHost, signing_keys: dict[str, SigningKey]) -> JwtVerifier:
    path = f"verifier-{uuid.uuid4().hex[:8]}"
    jwks_host.jwks[path] = [signing_keys["rsa"], signing_keys["ec"]]
    keys = JwksCache(jwks_host.url(path), timeout_s=2, cache_s=300)
    return JwtVerifier(keys, issuer=ISS, audience=AUD, leeway_s=30, max_lifetime_s=3600)


HS_VERIFIER = JwtVerifier(
    SharedSecret(SECRET), issuer=ISS, audience=AUD, leeway_s=30, max_lifetime_s=3600
)


def hs256(payload: dict[str, object]) -> str:
    return jwt.encode(payload, SECRET, algorithm="HS256")


@pytest.mark.parametrize("key_name", ["rsa", "ec"])
def test_a_good_token_gives_typed_claims(
    jwks_verifier: JwtVerifier, signing_keys: dict[str, SigningKey], key_name: str
) -> None:
    payload = claims(ISS, [AUD, "other"], "u-1", email="pat@host.test", name="Pat", groups="g")
    got = jwks_verifier.verify(sign(signing_keys[key_name], payload))
    assert (got.issuer, got.subject, got.email, got.name, got.groups) == (
        ISS,
        "u-1",
        "pat@host.test",
        "Pat",
        ("g",),
    )
    assert got.expires_at - got.issued_at == 300 and got.readable == "pat@host.test"


def test_an_unverified_email_is_not_used() -> None:
    got = HS_VERIFIER.verify(hs256(claims(ISS, AUD, "u-2", email="x@y.test", email_verified=False)))
    assert got.email is None and got.readable == "u-2"


def test_a_key_is_used_only_for_its_own_algorithm(
    jwks_verifier: JwtVerifier, signing_keys: dict[str, SigningKey]
) -> None:
    # Signed by the EC key but naming the RSA key's kid: the RSA key never checks an ES256 token.
    token = sign(signing_keys["ec"], claims(ISS, AUD, "u-3"), kid="host-rsa-1")
    with pytest.raises(TokenRejected) as info:
        jwks_verifier.verify(token)
    assert info.value.reason == "bad_algorithm"
    with pytest.raises(TokenRejected) as rs_on_secret:  # an RS256 token where HS256 is pinned
        HS_VERIFIER.verify(sign(signing_keys["rsa"], claims(ISS, AUD, "u-3")))
    assert rs_on_secret.value.reason == "bad_algorithm"


def test_an_empty_subject_is_a_missing_claim() -> None:
    with pytest.raises(TokenRejected) as info:
        HS_VERIFIER.verify(hs256(claims(ISS, AUD, "")))
    assert info.value.reason == "missing_claim"


BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _mutations(token: str) -> st.SearchStrategy[str]:
    """``token`` with one character replaced by any byte value; positions next to the dots and
    the end, and base64url characters, are drawn often: a lax base64 decoder ignores a last
    character's unused bits, so those changes are the likeliest to slip through (PyJWT refuses
    such non-canonical padding)."""
    ends = [i for i, c in enumerate(token) if c == "."]
    edges = sorted({p for i in ends for p in (i - 1, i, i + 1)} | {len(token) - 1})

    def mutate(position: int, char: str) -> str:
        return token[:position] + char + token[position + 1 :]

    positions = st.one_of(st.sampled_from(edges), st.integers(0, len(token) - 1))
    chars = st.one_of(st.sampled_from(BASE64URL), st.integers(0, 255).map(chr))
    return st.builds(mutate, positions, chars).filter(lambda changed: changed != token)


@pytest.mark.parametrize("kind", ["RS256", "ES256", "HS256"])
def test_any_single_byte_change_of_a_good_token_is_refused(
    jwks_verifier: JwtVerifier, signing_keys: dict[str, SigningKey], kind: str
) -> None:
    payload = claims(ISS, AUD, "u-4", email="pat@host.test")
    if kind == "HS256":
        verifier, token = HS_VERIFIER, hs256(payload)
    else:
        verifier = jwks_verifier
        token = sign(signing_keys["rsa" if kind == "RS256" else "ec"], payload)
    assert verifier.verify(token).subject == "u-4"

    @given(_mutations(token))
    @settings(max_examples=examples(300))
    def refused(changed: str) -> None:
        with pytest.raises(TokenRejected):
            verifier.verify(changed)

    refused()
