"""Audiences through the API: members' groups from the host token (at every sign-in) and from
``citewall users``; chat, search and history reload for members of different groups; a source
whose audience the member has left is dropped on reload; the admin preview runs the member
path and stores nothing. (``citewall users --group``: tests/cli/test_users_groups.py.)"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import func, select

from citewall.storage import users
from citewall.storage.models import Message, RetrievalEvent
from citewall_evals.redteam.audiences import AUDIENCE_CARDS

from .conftest import KB_FILE, ApiEnv, build_env
from .test_sign_in import SESSION, bearer, host_token, users_with

SSO = "How do I set up SAML single sign-on?"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[ApiEnv]:
    data = tmp_path_factory.mktemp("api-audiences")
    kb = data / "restricted.jsonl"
    kb.write_text("".join(json.dumps(c) + "\n" for c in AUDIENCE_CARDS), encoding="utf-8")
    built = build_env(data / "d", None, embedder, kb_files=(KB_FILE, kb))
    with built.runtime.session_factory() as session:
        for who, groups in (("enterprise", ["enterprise"]), ("basic", [])):
            user, token = users.create_user(
                session, f"{who}-{uuid.uuid4().hex[:6]}", "member", groups
            )
            built.tokens[who], built.user_ids[who] = token, user.id
    yield built
    built.runtime.close()


def _served(body: dict[str, Any]) -> set[str]:
    return {s["card_id"] for s in body["sources"]}


def test_members_of_different_groups_get_different_sources(env: ApiEnv) -> None:
    ent = env.chat("enterprise", SSO).json()
    basic = env.chat("basic", SSO).json()
    assert "aud-ent-sso" in _served(ent)
    assert "aud-ent-sso" not in _served(basic) and "CWAUD" not in json.dumps(basic)
    # An admin sees every card.
    assert "aud-ent-sso" in _served(env.chat("admin", SSO).json())
    found = env.client.post("/api/v1/search", json={"query": SSO}, headers=env.auth("enterprise"))
    hidden = env.client.post("/api/v1/search", json={"query": SSO}, headers=env.auth("basic"))
    assert "aud-ent-sso" in {r["card_id"] for r in found.json()["results"]}
    assert "CWAUD" not in hidden.text


def test_a_member_who_left_the_group_no_longer_sees_its_sources_on_reload(env: ApiEnv) -> None:
    with env.runtime.session_factory() as session:
        user, token = users.create_user(
            session, f"leaver-{uuid.uuid4().hex[:6]}", "member", ["enterprise"]
        )
    auth = bearer(token)
    answer = env.client.post("/api/v1/chat", json={"message": SSO}, headers=auth).json()
    assert "aud-ent-sso" in _served(answer)
    path = f"/api/v1/conversations/{answer['conversation_id']}"
    before = env.client.get(path, headers=auth).json()
    assert "aud-ent-sso" in {s["card_id"] for m in before["messages"] for s in m["sources"]}
    with env.runtime.session_factory() as session:
        users.set_groups(session, user.name, [])
    after = env.client.get(path, headers=auth).json()
    assert not {s["card_id"] for m in after["messages"] for s in m["sources"]} & {"aud-ent-sso"}


def test_the_admin_preview_answers_as_the_groups_given_and_stores_nothing(env: ApiEnv) -> None:
    def count() -> int:
        with env.runtime.session_factory() as session:
            return int(session.scalar(select(func.count()).select_from(Message)) or 0)

    before = count()
    as_ent = env.client.post(
        "/api/v1/admin/preview",
        json={"message": SSO, "groups": ["enterprise"]},
        headers=env.auth("admin"),
    )
    as_none = env.client.post(
        "/api/v1/admin/preview", json={"message": SSO}, headers=env.auth("admin")
    )
    assert as_ent.status_code == 200 and as_none.status_code == 200, as_ent.text
    assert "aud-ent-sso" in _served(as_ent.json()) and as_ent.json()["groups"] == ["enterprise"]
    assert "CWAUD" not in as_none.text
    assert count() == before
    member = env.client.post(
        "/api/v1/admin/preview", json={"message": SSO, "groups": []}, headers=env.auth("member")
    )
    assert member.status_code == 403
    bad = env.client.post(
        "/api/v1/admin/preview",
        json={"message": SSO, "groups": ["Not A Group"]},
        headers=env.auth("admin"),
    )
    assert bad.status_code == 422 and "not a group name" in bad.text


def test_the_knowledge_gaps_report_narrows_to_one_audience(env: ApiEnv) -> None:
    enterprise_gap, basic_gap = "where is your office in berlin", "is the lisbon office open"
    assert env.chat("enterprise", enterprise_gap).status_code == 200
    assert env.chat("basic", basic_gap).status_code == 200
    path = "/api/v1/admin/analytics/knowledge-gaps?period=day"

    def listed(query: str = "") -> tuple[dict[str, Any], set[str]]:
        r = env.client.get(path + query, headers=env.auth("admin"))
        assert r.status_code == 200, r.text
        report = r.json()
        return report, {q["question"] for g in report["groups"] for q in g["examples"]}

    everyone, asked = listed()
    assert {enterprise_gap, basic_gap} <= asked and everyone["audience"] is None
    ent, asked = listed("&audience=enterprise")
    assert ent["audience"] == "enterprise"
    assert enterprise_gap in asked and basic_gap not in asked
    assert ent["questions"] == sum(g["count"] for g in ent["groups"]) < everyone["questions"]
    nobody, asked = listed("&audience=partners")
    assert nobody["groups"] == [] and nobody["questions"] == 0
    bad = env.client.get(path + "&audience=Not A Group", headers=env.auth("admin"))
    assert bad.status_code == 422 and "audience" in bad.text


def test_entry_performance_narrows_to_one_audience_and_names_each_cards(env: ApiEnv) -> None:
    with env.runtime.session_factory() as session:
        _, token = users.create_user(
            session, f"perf-{uuid.uuid4().hex[:6]}", "member", ["enterprise", "perfcheck"]
        )
    answer = env.client.post("/api/v1/chat", json={"message": SSO}, headers=bearer(token))
    assert answer.status_code == 200 and "aud-ent-sso" in _served(answer.json())
    assert env.chat("basic", "How do I return an item?").status_code == 200
    path = "/api/v1/admin/analytics/entry-performance"

    def rows(query: str = "") -> list[dict[str, Any]]:
        r = env.client.get(path + query, headers=env.auth("admin"))
        assert r.status_code == 200, r.text
        return list(r.json())

    with env.runtime.session_factory() as session:
        retrieved = session.scalar(
            select(func.count())
            .select_from(RetrievalEvent)
            .where(RetrievalEvent.conversation_id == answer.json()["conversation_id"])
        )
    mine = rows("?audience=perfcheck")
    assert sum(r["times_retrieved"] for r in mine) == retrieved
    assert {r["card_id"]: r["times_cited"] for r in mine}["aud-ent-sso"] == 1
    everyone = rows()
    assert sum(r["times_retrieved"] for r in everyone) > retrieved
    audiences = {r["card_id"]: r["audiences"] for r in everyone}
    assert audiences["aud-ent-sso"] == ["enterprise"]
    assert all(a == [] for c, a in audiences.items() if not c.startswith("aud-"))
    assert rows("?audience=nobody-in-it") == []
    bad = env.client.get(path + "?audience=Not A Group", headers=env.auth("admin"))
    assert bad.status_code == 422 and "audience" in bad.text


def test_host_token_groups_are_read_at_every_sign_in(
    env_sign_in: ApiEnv, signing_keys: Any
) -> None:
    subject = f"grouped-{uuid.uuid4().hex[:6]}"
    env = env_sign_in
    first = env.client.post(
        SESSION,
        json={"token": host_token(signing_keys, subject, groups=["enterprise", "Not A Slug"])},
    )
    assert first.status_code == 201, first.text
    assert [u.groups for u in users_with(env, subject)] == [["enterprise"]]
    again = env.client.post(
        SESSION, json={"token": host_token(signing_keys, subject, groups="beta")}
    )
    assert again.status_code == 201
    assert [u.groups for u in users_with(env, subject)] == [["beta"]]
    gone = env.client.post(SESSION, json={"token": host_token(signing_keys, subject)})
    assert gone.status_code == 201
    assert [u.groups for u in users_with(env, subject)] == [[]]
