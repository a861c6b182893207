"""Admins behind the identity-aware proxy: an allowlisted email domain or group reaches the
admin pages through the assertion alone; other identities get 403; admin bearer tokens stop
working on admin routes while members' bearer tokens keep working; the CSRF rule for the
assertion (an ambient credential); /readyz and /me honour it. SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from jwks_host import SigningKey, claims, sign
from sqlalchemy import select

from citewall.storage.models import User
from citewall.storage.users import revoke_user

from .conftest import (
    ADMIN_DOMAIN,
    ADMIN_GROUP,
    PROXY_AUDIENCE,
    PROXY_HEADER,
    PROXY_ISSUER,
    ApiEnv,
    client_with,
    sign_in_count,
)

Keys = dict[str, SigningKey]
CSRF = {"X-Citewall-CSRF": "1"}
SEARCH = "/api/v1/admin/search"
QUERY = {"query": "labels", "limit": 3}


def assertion(keys: Keys, subject: str, **extra: object) -> dict[str, str]:
    token = sign(keys["proxy"], claims(PROXY_ISSUER, PROXY_AUDIENCE, subject, **extra))
    return {PROXY_HEADER: token}


def proxy_users(env: ApiEnv, subject: str) -> list[User]:
    with env.runtime.session_factory() as session:
        return list(session.scalars(select(User).where(User.subject == subject)))


def test_an_allowlisted_domain_reaches_the_admin_pages(
    env_sign_in: ApiEnv, signing_keys: Keys
) -> None:
    env = env_sign_in
    headers = assertion(signing_keys, "ada", email=f"ada@{ADMIN_DOMAIN}")
    for path in ("/api/v1/admin/cards", "/api/v1/admin/conversations"):
        assert env.client.get(path, headers=headers).status_code == 200, path
    me = env.client.get("/api/v1/me", headers=headers).json()
    assert me["role"] == "admin" and me["name"].startswith(f"ada@{ADMIN_DOMAIN}-")
    (user,) = proxy_users(env, "ada")
    assert (user.issuer, user.role, user.email) == (PROXY_ISSUER, "admin", f"ada@{ADMIN_DOMAIN}")
    bearer_form = {PROXY_HEADER: f"Bearer {headers[PROXY_HEADER]}"}
    assert env.client.get("/api/v1/admin/cards", headers=bearer_form).status_code == 200


def test_an_allowlisted_group_reaches_the_admin_pages(
    env_sign_in: ApiEnv, signing_keys: Keys
) -> None:
    headers = assertion(signing_keys, "grace", email="grace@elsewhere.test", groups=[ADMIN_GROUP])
    assert env_sign_in.client.get("/api/v1/admin/cards", headers=headers).status_code == 200


def test_another_identity_is_403_and_not_provisioned(
    env_sign_in: ApiEnv, signing_keys: Keys, caplog: pytest.LogCaptureFixture
) -> None:
    env = env_sign_in
    before = sign_in_count(env, "admin_proxy", "not_allowed")
    caplog.set_level("WARNING", logger="citewall.auth")
    for extra in (
        {"email": "eve@elsewhere.test", "groups": ["staff"]},
        {"email": f"eve@{ADMIN_DOMAIN}", "email_verified": False},  # unverified: not used
        {"email": f"eve@sub.{ADMIN_DOMAIN}"},
    ):
        r = env.client.get("/api/v1/admin/cards", headers=assertion(signing_keys, "eve", **extra))
        assert r.status_code == 403, (extra, r.text)
    assert proxy_users(env, "eve") == []
    assert "admin proxy sign-in refused: not_allowed:" in caplog.text
    assert sign_in_count(env, "admin_proxy", "not_allowed") == before + 3


#: Email claims that name an allowlisted domain somewhere but are not an address at it.
MALFORMED_EMAILS = [
    f"x@evil.test@{ADMIN_DOMAIN}",
    f'"x@evil.test"@{ADMIN_DOMAIN}',
    f"Eve <eve@{ADMIN_DOMAIN}>",
    f"eve@{ADMIN_DOMAIN} <eve@evil.test>",
    f" eve@{ADMIN_DOMAIN}",
    f"eve @{ADMIN_DOMAIN}",
    f"eve@{ADMIN_DOMAIN}\n",
    f"eve\x00@{ADMIN_DOMAIN}",
    f"eve..x@{ADMIN_DOMAIN}",
    f".eve@{ADMIN_DOMAIN}",
    f"@{ADMIN_DOMAIN}",
    f"eve@{ADMIN_DOMAIN}.",
    f"eve@.{ADMIN_DOMAIN}",
    f"eve(comment)@{ADMIN_DOMAIN}",
    f"eve@[{ADMIN_DOMAIN}]",
    f"ev\u00e9@{ADMIN_DOMAIN}",
]


@pytest.mark.parametrize("email", MALFORMED_EMAILS)
def test_a_malformed_email_at_an_allowlisted_domain_is_403_and_not_provisioned(
    env_sign_in: ApiEnv, signing_keys: Keys, email: str
) -> None:
    env = env_sign_in
    subject = f"mallory-{MALFORMED_EMAILS.index(email)}"
    before = sign_in_count(env, "admin_proxy", "not_allowed")
    headers = assertion(signing_keys, subject, email=email)
    r = env.client.get("/api/v1/admin/cards", headers=headers)
    assert r.status_code == 403, (email, r.text)
    assert r.json() == {"detail": "your identity is not allowed the admin role here"}
    assert proxy_users(env, subject) == []
    assert sign_in_count(env, "admin_proxy", "not_allowed") == before + 1


def test_the_email_domain_is_compared_without_case(env_sign_in: ApiEnv, signing_keys: Keys) -> None:
    headers = assertion(signing_keys, "shouty", email=f"Shouty.Person+cw@{ADMIN_DOMAIN.upper()}")
    assert env_sign_in.client.get("/api/v1/admin/cards", headers=headers).status_code == 200


def test_an_admin_who_no_longer_qualifies_is_403(env_sign_in: ApiEnv, signing_keys: Keys) -> None:
    env = env_sign_in
    was = assertion(signing_keys, "moved", email=f"moved@{ADMIN_DOMAIN}")
    assert env.client.get("/api/v1/admin/cards", headers=was).status_code == 200
    now = assertion(signing_keys, "moved", email="moved@elsewhere.test")
    assert env.client.get("/api/v1/admin/cards", headers=now).status_code == 403
    assert env.client.get("/api/v1/me", headers=now).status_code == 403


def test_a_disabled_proxy_admin_is_refused(env_sign_in: ApiEnv, signing_keys: Keys) -> None:
    env = env_sign_in
    headers = assertion(signing_keys, "gone", email=f"gone@{ADMIN_DOMAIN}")
    name = env.client.get("/api/v1/me", headers=headers).json()["name"]
    with env.runtime.session_factory() as session:
        revoke_user(session, name)
    r = env.client.get("/api/v1/admin/cards", headers=headers)
    assert r.status_code == 401 and r.json() == {"detail": "the sign-in token was not accepted"}


def test_bearer_tokens_with_the_proxy_configured(env_sign_in: ApiEnv) -> None:
    env = env_sign_in
    r = env.client.get("/api/v1/admin/cards", headers=env.auth("admin"))
    assert r.status_code == 403
    assert r.json() == {"detail": "admin routes are behind the identity-aware proxy"}
    assert env.client.get("/api/v1/admin/cards", headers=env.auth("member")).status_code == 403
    for path in ("/api/v1/me", "/api/v1/conversations"):
        assert env.client.get(path, headers=env.auth("member")).status_code == 200, path
    assert env.client.get("/api/v1/me").status_code == 401  # neither credential


def test_an_unsafe_request_on_the_assertion_needs_the_csrf_header_and_its_own_origin(
    env_sign_in: ApiEnv, signing_keys: Keys
) -> None:
    env = env_sign_in
    headers = assertion(signing_keys, "csrf", email=f"csrf@{ADMIN_DOMAIN}")
    refused = [
        headers,
        {**headers, "X-Citewall-CSRF": "0"},
        {**headers, **CSRF, "Origin": "https://evil.test"},
        {**headers, **CSRF, "Origin": "null"},
    ]
    for sent in refused:
        r = env.client.post(SEARCH, json=QUERY, headers=sent)
        assert r.status_code == 403, sent
        assert r.json() == {"detail": "cross-site request refused"}
    for sent in ({**headers, **CSRF}, {**headers, **CSRF, "Origin": "http://testserver"}):
        assert env.client.post(SEARCH, json=QUERY, headers=sent).status_code == 200, sent
    # A proxy admin may chat (a member route), under the same rule.
    chat = {"message": "How long do refunds take?"}
    assert env.client.post("/api/v1/chat", json=chat, headers=headers).status_code == 403
    assert (
        env.client.post("/api/v1/chat", json=chat, headers={**headers, **CSRF}).status_code == 200
    )
    # Bearer tokens are not ambient: no CSRF header needed.
    r = env.client.post("/api/v1/search", json=QUERY, headers=env.auth("member"))
    assert r.status_code == 200


def test_readyz_details_follow_the_assertion_only(env_sign_in: ApiEnv, signing_keys: Keys) -> None:
    env = env_sign_in
    headers = assertion(signing_keys, "ops", email=f"ops@{ADMIN_DOMAIN}")
    assert "checks" in env.client.get("/readyz", headers=headers).json()
    assert "checks" not in env.client.get("/readyz", headers=env.auth("admin")).json()
    assert "checks" not in env.client.get("/readyz").json()


def test_an_oidc_proxy_passing_the_id_token_as_the_bearer_token(
    env_sign_in: ApiEnv, signing_keys: Keys
) -> None:
    """CITEWALL_ADMIN_PROXY_HEADER=Authorization (oauth2-proxy): a bearer JWT is the assertion,
    a citewall token is still a citewall token."""
    env = env_sign_in
    _, client = client_with(env, admin_proxy_header="Authorization")
    token = assertion(signing_keys, "oidc", email=f"oidc@{ADMIN_DOMAIN}")[PROXY_HEADER]
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/v1/admin/cards", headers=headers).status_code == 200
    assert client.get("/api/v1/me", headers=headers).json()["role"] == "admin"
    assert "checks" in client.get("/readyz", headers=headers).json()
    assert client.get("/api/v1/me", headers=env.auth("member")).json()["role"] == "member"
    assert client.get("/api/v1/admin/cards", headers=env.auth("admin")).status_code == 403
    bad = client.get("/api/v1/admin/cards", headers={"Authorization": "Bearer x.y.z"})
    assert bad.status_code == 401
