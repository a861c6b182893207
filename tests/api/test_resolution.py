"""The resolution report through the API: an answered conversation is open until its window
closes, then resolved; a "Not helpful" rating makes one unresolved and a handoff one escalated;
the conversations behind each number are listed; the outcomes per top card and per
knowledge-gap group, and each group's conversations as a filtered list; bad parameters are a
422, a member a 403. SQLite and PostgreSQL."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import timedelta

from fastapi.testclient import TestClient
from pydantic import SecretStr

from citewall.api.app import create_app
from citewall.storage.types import utcnow

from .conftest import EXTERNAL_QUESTION, ApiEnv, client_with


def test_outcomes_per_period_and_the_conversations_behind_them(env_both: ApiEnv) -> None:
    env = env_both
    _, handoff_client = client_with(
        env,
        handoff_webhook_url="http://127.0.0.1:9/handoff",
        handoff_webhook_secret=SecretStr("resolution-secret-0123456789"),
    )
    fine = env.chat("member", EXTERNAL_QUESTION).json()["conversation_id"]
    rated = env.chat("member", EXTERNAL_QUESTION).json()
    env.client.put(
        f"/api/v1/messages/{rated['message_id']}/feedback",
        json={"rating": "down"},
        headers=env.auth("member"),
    )
    escalated = env.chat("member", EXTERNAL_QUESTION).json()["conversation_id"]
    assert (
        handoff_client.post(
            f"/api/v1/conversations/{escalated}/handoff", headers=env.auth("member")
        ).status_code
        == 202
    )
    admin = env.auth("admin")
    now = env.client.get(
        "/api/v1/admin/analytics/resolution", params={"period": "day"}, headers=admin
    ).json()
    assert now["window_hours"] == 72 and now["period"] == "day"
    assert now["totals"]["counts"] == {
        "resolved": 0,
        "escalated": 1,
        "unresolved": 1,
        "abandoned": 0,
        "open": 1,
    }
    assert now["totals"]["decided"] == 2 and now["totals"]["resolution_rate"] == 0.0
    # Three days on, the window has closed: the answered conversation counts as resolved.
    later = replace(env.runtime, clock=lambda: utcnow() + timedelta(hours=73))
    client = TestClient(create_app(later))
    week = client.get(
        "/api/v1/admin/analytics/resolution", params={"period": "week"}, headers=admin
    ).json()
    assert week["totals"]["counts"]["resolved"] == 1 and week["totals"]["counts"]["open"] == 0
    assert week["totals"]["resolution_rate"] == round(1 / 3, 4)
    behind = client.get(
        "/api/v1/admin/analytics/resolution/conversations",
        params={"outcome": "resolved"},
        headers=admin,
    ).json()
    assert [c["conversation_id"] for c in behind] == [fine]
    every = client.get("/api/v1/admin/analytics/resolution/conversations", headers=admin).json()
    assert {c["conversation_id"]: c["outcome"] for c in every} == {
        fine: "resolved",
        rated["conversation_id"]: "unresolved",
        escalated: "escalated",
    }


UNCOVERED = "where is your office in berlin"


def test_outcomes_per_top_card_and_per_knowledge_gap_group(env_both: ApiEnv) -> None:
    env = env_both
    admin = env.auth("admin")
    since = {"since": utcnow().isoformat()}
    fine = env.chat("member", EXTERNAL_QUESTION).json()["conversation_id"]
    rated = env.chat("member", EXTERNAL_QUESTION).json()
    env.client.put(
        f"/api/v1/messages/{rated['message_id']}/feedback",
        json={"rating": "down"},
        headers=env.auth("member"),
    )
    gap = env.chat("member", UNCOVERED).json()["conversation_id"]
    path = "/api/v1/admin/analytics/resolution"
    listed = env.client.get(f"{path}/conversations", params=since, headers=admin).json()
    top = {c["conversation_id"]: c["top_card_id"] for c in listed}
    assert set(top) == {fine, rated["conversation_id"], gap}
    # The same question, the same card ranked first.
    card = top[fine]
    assert card is not None and top[rated["conversation_id"]] == card
    cards = env.client.get(f"{path}/cards", params=since, headers=admin).json()
    want: dict[str, Counter[str]] = {}
    for c in listed:
        if c["top_card_id"] is not None:
            want.setdefault(c["top_card_id"], Counter())[c["outcome"]] += 1
    assert {r["card_id"]: r["conversations"] for r in cards} == {
        k: sum(v.values()) for k, v in want.items()
    }
    row = next(r for r in cards if r["card_id"] == card)
    assert row["title"] and row["counts"]["open"] >= 1 and row["counts"]["unresolved"] >= 1
    behind = env.client.get(
        f"{path}/conversations", params=since | {"top_card_id": card}, headers=admin
    ).json()
    assert {c["conversation_id"] for c in behind} == {k for k, v in top.items() if v == card}
    groups = env.client.get(f"{path}/gaps", params=since, headers=admin).json()
    office = next(g for g in groups if g["question"] == UNCOVERED)
    assert office["verdict"] == "gap" and office["questions"] == 1
    assert office["conversations"] == 1
    assert office["counts"]["unresolved"] == 1 and office["resolution_rate"] == 0.0
    # The conversations behind a group's numbers: a filtered list, like the per-card one.
    for g in groups:
        members = env.client.get(
            f"{path}/conversations", params=since | {"gap_group": g["group_id"]}, headers=admin
        )
        assert members.status_code == 200, members.text
        outcomes = Counter(c["outcome"] for c in members.json())
        assert len(members.json()) == g["conversations"]
        assert {o: outcomes[o] for o in g["counts"]} == g["counts"]
    in_office = env.client.get(
        f"{path}/conversations", params=since | {"gap_group": office["group_id"]}, headers=admin
    ).json()
    assert [(c["conversation_id"], c["outcome"]) for c in in_office] == [(gap, "unresolved")]
    narrowed = env.client.get(
        f"{path}/conversations",
        params=since | {"gap_group": office["group_id"], "outcome": "resolved"},
        headers=admin,
    ).json()
    assert narrowed == []
    # An id that names no group of the window is a 404 that says where ids come from.
    stale = env.client.get(
        f"{path}/conversations", params=since | {"gap_group": "no-such-group"}, headers=admin
    )
    assert stale.status_code == 404 and "/resolution/gaps" in stale.json()["detail"]


def test_bad_parameters_and_members_are_refused(env_both: ApiEnv) -> None:
    env = env_both
    admin = env.auth("admin")
    path = "/api/v1/admin/analytics/resolution"
    assert env.client.get(path, params={"period": "month"}, headers=admin).status_code == 422
    assert env.client.get(path, params={"since": "yesterday"}, headers=admin).status_code == 422
    assert (
        env.client.get(
            f"{path}/conversations", params={"outcome": "won"}, headers=admin
        ).status_code
        == 422
    )
    assert env.client.get(path, headers=env.auth("member")).status_code == 403
    # A card id no database can store is refused, not sent to the database.
    nul = env.client.get(f"{path}/conversations", params={"top_card_id": "card\x00"}, headers=admin)
    assert nul.status_code == 422, nul.text
    nul = env.client.get(f"{path}/conversations", params={"gap_group": "g\x00"}, headers=admin)
    assert nul.status_code == 422, nul.text
    for part in ("cards", "gaps"):
        assert (
            env.client.get(f"{path}/{part}", params={"limit": 0}, headers=admin).status_code == 422
        )
        assert env.client.get(f"{path}/{part}", headers=env.auth("member")).status_code == 403
