"""Every bad token, on both sign-in paths (a member's host token on POST /api/v1/auth/session,
the proxy's assertion on an admin route): 401 with the generic detail, the reason in the log
and the metric, no user created, never a 500. SQLite and PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx import Response
from jwks_host import (
    JwksHost,
    SigningKey,
    claims,
    closed_port_url,
    hs256_with,
    sign,
    tamper_payload,
    tamper_signature,
    unsigned,
)
from sqlalchemy import func, select

from .conftest import (
    ADMIN_DOMAIN,
    MEMBER_AUDIENCE,
    MEMBER_ISSUER,
    PROXY_AUDIENCE,
    PROXY_HEADER,
    PROXY_ISSUER,
    ApiEnv,
    client_with,
    sign_in_count,
)

GENERIC = "the sign-in token was not accepted"
MAX_MEMBER_LIFETIME_S = 3600  # the default CITEWALL_MEMBER_JWT_MAX_LIFETIME_S
MAX_ASSERTION_LIFETIME_S = 31 * 86400


@dataclass(frozen=True)
class SignInPath:
    """One way a signed token reaches citewall."""

    kind: str
    issuer: str
    audience: str
    key_name: str
    max_lifetime_s: int

    def claims(self, subject: str, **extra: Any) -> dict[str, Any]:
        # An allowlisted email: on the proxy path a good token would make an admin.
        return claims(
            self.issuer, self.audience, subject, email=f"{subject}@{ADMIN_DOMAIN}", **extra
        )

    def send(self, client: TestClient, token: str) -> Response:
        if self.kind == "member":
            return client.post("/api/v1/auth/session", json={"token": token})
        return client.get("/api/v1/admin/cards", headers={PROXY_HEADER: token})


PATHS = [
    SignInPath("member", MEMBER_ISSUER, MEMBER_AUDIENCE, "rsa", MAX_MEMBER_LIFETIME_S),
    SignInPath("admin_proxy", PROXY_ISSUER, PROXY_AUDIENCE, "proxy", MAX_ASSERTION_LIFETIME_S),
]

Keys = dict[str, SigningKey]
Build = Callable[[SignInPath, Keys, str], str]


def stranger(p: SignInPath, keys: Keys) -> SigningKey:
    """A key no JWKS serves, of the same algorithm as the path's own key."""
    return keys["stranger" if keys[p.key_name].alg == "RS256" else "stranger-ec"]


def good(p: SignInPath, keys: Keys, subject: str, **extra: Any) -> str:
    return sign(keys[p.key_name], p.claims(subject, **extra))


def now() -> int:
    return int(time.time())


#: The member path signs with the host's RSA key, the proxy path with the proxy's EC key.
#: (case, expected reason, token builder): the builder gets the path, the keys and a subject.
CASES: list[tuple[str, str, Build]] = [
    ("expired", "expired", lambda p, k, s: good(p, k, s, iat=now() - 7200, exp=now() - 3600)),
    ("nbf-in-the-future", "not_yet_valid", lambda p, k, s: good(p, k, s, nbf=now() + 3600)),
    (
        "iat-in-the-future",
        "not_yet_valid",
        lambda p, k, s: good(p, k, s, iat=now() + 3600, exp=now() + 3900),
    ),
    ("wrong-audience", "bad_audience", lambda p, k, s: good(p, k, s, aud="someone-else")),
    ("wrong-issuer", "bad_issuer", lambda p, k, s: good(p, k, s, iss="https://evil.test")),
    ("unknown-kid", "unknown_key", lambda p, k, s: sign(stranger(p, k), p.claims(s))),
    (
        "stranger-key-known-kid",
        "bad_signature",
        lambda p, k, s: sign(stranger(p, k), p.claims(s), kid=k[p.key_name].kid),
    ),
    ("alg-none", "bad_algorithm", lambda p, k, s: unsigned(p.claims(s), k[p.key_name].kid)),
    (
        "hs256-with-the-public-key",
        "bad_algorithm",
        lambda p, k, s: hs256_with(k[p.key_name].public_pem, p.claims(s), k[p.key_name].kid),
    ),
    (
        "tampered-payload",
        "bad_signature",
        lambda p, k, s: tamper_payload(good(p, k, s), sub=s + "-x", email=f"x@{ADMIN_DOMAIN}"),
    ),
    ("tampered-signature", "bad_signature", lambda p, k, s: tamper_signature(good(p, k, s))),
    ("missing-sub", "missing_claim", lambda p, k, s: good(p, k, s, sub=None)),
    ("missing-exp", "missing_claim", lambda p, k, s: good(p, k, s, exp=None)),
    ("missing-iat", "missing_claim", lambda p, k, s: good(p, k, s, iat=None)),
    ("missing-aud", "missing_claim", lambda p, k, s: good(p, k, s, aud=None)),
    ("missing-iss", "missing_claim", lambda p, k, s: good(p, k, s, iss=None)),
    (
        "too-long-lived",
        "too_long_lived",
        lambda p, k, s: good(p, k, s, iat=now(), exp=now() + p.max_lifetime_s + 60),
    ),
    ("not-a-jwt", "malformed", lambda p, k, s: "not-a-jwt"),
    ("over-8192-characters", "malformed", lambda p, k, s: good(p, k, s, pad="x" * 9000)),
]


def users_count(env: ApiEnv) -> int:
    from citewall.storage.models import User

    with env.runtime.session_factory() as session:
        return int(session.scalar(select(func.count()).select_from(User)) or 0)


def subjects(env: ApiEnv, prefix: str) -> list[str]:
    from citewall.storage.models import User

    with env.runtime.session_factory() as session:
        return list(session.scalars(select(User.subject).where(User.subject.like(f"{prefix}%"))))


def assert_refused(
    env: ApiEnv, response: Response, caplog: pytest.LogCaptureFixture, reason: str, kind: str
) -> None:
    assert response.status_code == 401, response.text
    assert response.json() == {"detail": GENERIC}
    logged = [
        r.getMessage()
        for r in caplog.records
        if r.name == "citewall.auth" and r.levelname == "WARNING"
    ]
    assert any(f"sign-in refused: {reason}:" in m for m in logged), logged
    assert all(kind.replace("_", " ") in m for m in logged if "sign-in refused" in m)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.kind)
@pytest.mark.parametrize(("case", "reason", "build"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_token_is_401_with_the_reason_only_in_the_log(
    env_sign_in: ApiEnv,
    signing_keys: Keys,
    caplog: pytest.LogCaptureFixture,
    path: SignInPath,
    case: str,
    reason: str,
    build: Build,
) -> None:
    env = env_sign_in
    subject = f"{path.kind}-{case}"
    token = build(path, signing_keys, subject)
    before, counted = users_count(env), sign_in_count(env, path.kind, reason)
    caplog.set_level("WARNING", logger="citewall.auth")
    response = path.send(env.client, token)
    assert_refused(env, response, caplog, reason, path.kind)
    assert reason not in response.text and token not in caplog.text
    assert users_count(env) == before and subjects(env, subject) == []
    assert sign_in_count(env, path.kind, reason) == counted + 1


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.kind)
def test_a_good_token_on_the_same_path_is_accepted(
    env_sign_in: ApiEnv, signing_keys: Keys, path: SignInPath
) -> None:
    """The control for the table: the same builder with nothing wrong gets in."""
    response = path.send(env_sign_in.client, good(path, signing_keys, f"{path.kind}-good"))
    assert response.status_code in (200, 201), response.text
    assert subjects(env_sign_in, f"{path.kind}-good") == [f"{path.kind}-good"]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.kind)
@pytest.mark.parametrize("endpoint", ["down", "slow"])
def test_an_unreachable_or_slow_jwks_is_401_jwks_unavailable(
    env_sign_in: ApiEnv,
    jwks_host: JwksHost,
    signing_keys: Keys,
    caplog: pytest.LogCaptureFixture,
    path: SignInPath,
    endpoint: str,
) -> None:
    env = env_sign_in
    if endpoint == "down":
        url = closed_port_url()
    else:
        name = f"slow-{path.kind}-{env.extra['jwks_tag']}"
        jwks_host.jwks[name] = [signing_keys[path.key_name]]
        jwks_host.delay_s[name] = 1.5
        url = jwks_host.url(name)
    setting = "member_jwks_url" if path.kind == "member" else "admin_proxy_jwks_url"
    _, client = client_with(env, **{setting: url, "jwks_timeout_s": 0.2})
    subject = f"{path.kind}-jwks-{endpoint}"
    before = users_count(env)
    caplog.set_level("WARNING", logger="citewall.auth")
    started = time.monotonic()
    response = path.send(client, good(path, signing_keys, subject))
    assert time.monotonic() - started < 1.4  # the timeout answered, not the slow host
    assert_refused(env, response, caplog, "jwks_unavailable", path.kind)
    assert users_count(env) == before and subjects(env, subject) == []
