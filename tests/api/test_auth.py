"""Bearer auth: 401 (with WWW-Authenticate) for missing/malformed/unknown/revoked tokens, 403
for a member on admin routes, and the scheme declared in OpenAPI."""

from __future__ import annotations

import pytest

from .conftest import ApiEnv

ZERO = "00000000-0000-0000-0000-000000000000"  # a well-formed id nobody has
MEMBER_ROUTES = [
    ("GET", "/api/v1/me", None),
    ("GET", "/api/v1/conversations", None),
    ("POST", "/api/v1/chat", {"message": "hi"}),
    ("POST", "/api/v1/chat/stream", {"message": "hi"}),
    ("POST", "/api/v1/search", {"query": "labels", "limit": 3}),
    ("GET", "/api/v1/examples", None),
    ("PATCH", f"/api/v1/conversations/{ZERO}", {"title": "t"}),
    ("DELETE", f"/api/v1/conversations/{ZERO}", None),
    ("POST", f"/api/v1/conversations/{ZERO}/regenerate", None),
    ("PUT", f"/api/v1/messages/{ZERO}/feedback", {"rating": "up"}),
    ("DELETE", f"/api/v1/messages/{ZERO}/feedback", None),
]
ADMIN_ROUTES = [
    ("GET", "/api/v1/admin/cards", None),
    ("GET", "/api/v1/admin/conversations", None),
    ("GET", "/api/v1/admin/analytics/entry-performance", None),
    ("GET", "/api/v1/admin/analytics/retrieval-events", None),
    ("GET", "/api/v1/admin/analytics/feedback", None),
    ("GET", "/api/v1/admin/analytics/headline", None),
    ("POST", "/api/v1/admin/search", {"query": "labels", "limit": 3}),
]
BAD_AUTH = [
    {},
    {"Authorization": "Bearer"},
    {"Authorization": "Bearer "},
    {"Authorization": "Basic dXNlcjpwYXNz"},
    {"Authorization": "Bearer not-a-real-token"},
    {"Authorization": "Bearer " + "x" * 2000},
    {"Authorization": "token-without-scheme"},
]


@pytest.mark.parametrize("method,path,body", MEMBER_ROUTES + ADMIN_ROUTES)
def test_bad_or_missing_token_is_401_with_challenge(
    env_sqlite: ApiEnv, method: str, path: str, body: dict[str, object] | None
) -> None:
    for headers in BAD_AUTH:
        r = env_sqlite.client.request(method, path, json=body, headers=headers)
        assert r.status_code == 401, (headers, r.status_code, r.text)
        assert r.headers["www-authenticate"] == "Bearer"
        assert isinstance(r.json()["detail"], str)


@pytest.mark.parametrize("method,path,body", ADMIN_ROUTES)
def test_member_on_admin_route_is_403_and_admin_is_let_in(
    env_sqlite: ApiEnv, method: str, path: str, body: dict[str, object] | None
) -> None:
    env = env_sqlite
    r = env.client.request(method, path, json=body, headers=env.auth("member"))
    assert r.status_code == 403, r.text
    assert "admin" in r.json()["detail"]
    r = env.client.request(method, path, json=body, headers=env.auth("admin"))
    assert r.status_code == 200, r.text


def test_revoked_token_is_401(env_sqlite: ApiEnv) -> None:
    from citewall.storage import users

    env = env_sqlite
    with env.runtime.session_factory() as session:
        _, token = users.create_user(session, "soon-revoked", "member")
        assert (
            env.client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"}).status_code
            == 200
        )
        users.revoke_user(session, "soon-revoked")
    r = env.client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"


def test_openapi_declares_the_bearer_scheme_on_protected_routes(env_sqlite: ApiEnv) -> None:
    spec = env_sqlite.app.openapi()
    schemes = spec["components"]["securitySchemes"]
    name, scheme = next(iter(schemes.items()))
    assert scheme == {**scheme, "type": "http", "scheme": "bearer"}
    for method, path, _ in MEMBER_ROUTES + ADMIN_ROUTES:
        template = path.replace(f"conversations/{ZERO}", "conversations/{conversation_id}")
        template = template.replace(f"messages/{ZERO}", "messages/{message_id}")
        op = spec["paths"][template][method.lower()]
        assert {name: []} in op["security"], path
    assert "security" not in spec["paths"]["/healthz"]["get"]
