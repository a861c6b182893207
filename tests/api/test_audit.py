"""The audit log: an admin's read of a member's conversation (by token, and through the
identity-aware proxy) and of the reports holding members' words is one line each, with who,
how, when and from where; admins read it paged, members cannot; no route edits or deletes it."""

from __future__ import annotations

import ast
from pathlib import Path

from jwks_host import SigningKey, claims, sign

from .conftest import (
    ADMIN_DOMAIN,
    EXTERNAL_QUESTION,
    PROXY_AUDIENCE,
    PROXY_HEADER,
    PROXY_ISSUER,
    ApiEnv,
)

AUDIT = "/api/v1/admin/audit"
PACKAGE = Path(__file__).resolve().parents[2] / "citewall"


def _conversation(env: ApiEnv) -> str:
    r = env.chat("member", EXTERNAL_QUESTION)
    assert r.status_code == 200, r.text
    return str(r.json()["conversation_id"])


def _lines(env: ApiEnv, headers: dict[str, str], **params: object) -> list[dict[str, object]]:
    r = env.client.get(AUDIT, headers=headers, params=params)
    assert r.status_code == 200, r.text
    return list(r.json()["entries"])


def test_an_admin_read_of_a_conversation_is_one_line(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    conversation_id = _conversation(env)
    before = env.client.get(AUDIT, headers=env.auth("admin")).json()["total"]
    r = env.client.get(f"/api/v1/admin/conversations/{conversation_id}", headers=env.auth("admin"))
    assert r.status_code == 200
    page = env.client.get(AUDIT, headers=env.auth("admin")).json()
    assert page["total"] == before + 1
    line = page["entries"][0]
    assert line["action"] == "conversation.read"
    assert line["target"] == f"conversation:{conversation_id}"
    assert line["actor_user_id"] == env.user_ids["admin"]
    assert line["actor"].startswith("admin-") and line["via"] == "bearer"
    assert line["address"] == "testclient"
    assert line["detail"] == {"user_id": env.user_ids["member"]}
    # A conversation that does not exist was not read: no line.
    missing = "/api/v1/admin/conversations/00000000-0000-0000-0000-000000000000"
    assert env.client.get(missing, headers=env.auth("admin")).status_code == 404
    assert env.client.get(AUDIT, headers=env.auth("admin")).json()["total"] == before + 1


def test_reports_holding_members_words_are_logged(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    admin = env.auth("admin")
    for path, action in (
        ("/api/v1/admin/analytics/feedback", "feedback.read"),
        ("/api/v1/admin/analytics/knowledge-gaps", "knowledge_gaps.read"),
        ("/api/v1/admin/analytics/retrieval-events", "retrieval_events.read"),
        (f"/api/v1/admin/analytics/exposure/{env.user_ids['member']}", "exposure.read"),
    ):
        assert env.client.get(path, headers=admin).status_code == 200, path
        assert _lines(env, admin, limit=1)[0]["action"] == action, path
    # Counts without words are not reads of a member's data.
    total = env.client.get(AUDIT, headers=admin).json()["total"]
    assert env.client.get("/api/v1/admin/analytics/headline", headers=admin).status_code == 200
    assert env.client.get(AUDIT, headers=admin).json()["total"] == total


def test_the_log_is_paged_filtered_and_admin_only(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    admin = env.auth("admin")
    conversation_id = _conversation(env)
    for _ in range(3):
        env.client.get(f"/api/v1/admin/conversations/{conversation_id}", headers=admin)
    first = env.client.get(AUDIT, headers=admin, params={"limit": 2}).json()
    second = env.client.get(AUDIT, headers=admin, params={"limit": 2, "offset": 2}).json()
    assert len(first["entries"]) == 2 and first["total"] >= 3
    assert {e["id"] for e in first["entries"]}.isdisjoint(e["id"] for e in second["entries"])
    ids = [e["id"] for e in first["entries"] + second["entries"]]
    assert ids == sorted(ids, reverse=True)  # newest first
    only = _lines(env, admin, action="conversation.read", limit=500)
    assert only and {e["action"] for e in only} == {"conversation.read"}
    assert env.client.get(AUDIT, headers=admin, params={"action": "x"}).status_code == 422
    assert env.client.get(AUDIT, headers=env.auth("member")).status_code == 403
    assert env.client.get(AUDIT).status_code == 401


def test_no_route_edits_or_deletes_the_log(env_sqlite: ApiEnv) -> None:
    """Every route the app serves: the log's path answers GET alone; and in the package only
    ``storage.audit`` touches the table, which has no update and deletes only by age."""
    spec = env_sqlite.app.openapi()
    for path, operations in spec["paths"].items():
        if "audit" in path:
            assert set(operations) == {"get"}, path
    for method in ("post", "put", "patch", "delete"):
        r = env_sqlite.client.request(method, AUDIT, headers=env_sqlite.auth("admin"))
        assert r.status_code == 405, method
    users = []
    for path in PACKAGE.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        if "AuditEntry" in names:
            users.append(path.relative_to(PACKAGE).as_posix())
    assert sorted(users) == ["storage/audit.py"]
    source = (PACKAGE / "storage" / "audit.py").read_text(encoding="utf-8")
    assert "update(" not in source and source.count("delete(AuditEntry)") == 1


def test_a_read_through_the_identity_aware_proxy_is_logged(
    env_sign_in: ApiEnv, signing_keys: dict[str, SigningKey]
) -> None:
    env = env_sign_in
    conversation_id = _conversation(env)
    token = sign(
        signing_keys["proxy"],
        claims(PROXY_ISSUER, PROXY_AUDIENCE, "auditor", email=f"auditor@{ADMIN_DOMAIN}"),
    )
    headers = {PROXY_HEADER: token}
    r = env.client.get(f"/api/v1/admin/conversations/{conversation_id}", headers=headers)
    assert r.status_code == 200, r.text
    line = _lines(env, headers, action="conversation.read", limit=1)[0]
    assert line["via"] == "admin_proxy"
    assert str(line["actor"]).startswith(f"auditor@{ADMIN_DOMAIN}-")
    assert line["target"] == f"conversation:{conversation_id}"
    assert line["address"] == "testclient"


def test_a_members_export_is_logged_under_their_name(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    _conversation(env)
    r = env.client.get("/api/v1/me/export", headers=env.auth("member"))
    assert r.status_code == 200 and r.json()["conversations"]
    line = _lines(env, env.auth("admin"), action="export", limit=1)[0]
    assert line["actor_user_id"] == env.user_ids["member"] and line["via"] == "bearer"
    assert line["target"] == f"user:{env.user_ids['member']}"
    assert line["detail"] == {"conversations": len(r.json()["conversations"])}
