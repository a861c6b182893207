"""Playbooks written in the admin pages and disabled cards, through the HTTP API on SQLite and
PostgreSQL: versions and rollback, per-field refusals, what a member's answer draws on after a
save and after a disable, 403 for members, and the audit lines."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from citewall.ingest.pipeline import ingest_cards
from citewall.kb.card import Card
from citewall.storage import card_versions, kb_sources
from citewall.storage.models import AuditEntry

from .conftest import ApiEnv

PB = "/api/v1/admin/playbooks"
QUESTION = "How much is the pallet surcharge for a freight parcel over 30 kg?"
PLAYBOOK = {
    "id": "pb-pallet-surcharge",
    "title": "Pallet surcharge for freight parcels",
    "body": "# Pallet surcharge\n\nFreight parcels over **30 kg** ship on a pallet. "
    "Staff note: apply surcharge code PLT-7 in Helm.",
    "reply": "A pallet surcharge of 14 euros applies to freight parcels over 30 kg.",
    "audiences": [],
}


def _drawn_on(env: ApiEnv, conversation_id: str) -> set[str]:
    """The cards a stored answer retrieved (as an admin sees its retrieval events)."""
    conv = env.client.get(
        f"/api/v1/admin/conversations/{conversation_id}", headers=env.auth("admin")
    ).json()
    return {e["card_id"] for e in conv["retrieval_events"]}


def _audit(env: ApiEnv, target: str) -> list[dict[str, Any]]:
    with env.runtime.session_factory() as session:
        rows = session.scalars(
            select(AuditEntry)
            .where(AuditEntry.action == "cards.change", AuditEntry.target == target)
            .order_by(AuditEntry.id)
        )
        return [{"actor": r.actor, "via": r.via, **r.detail} for r in rows]


def test_a_playbook_is_served_versioned_rolled_back_and_audited(env_both: ApiEnv) -> None:
    env = env_both
    admin = env.auth("admin")
    made = env.client.post(PB, json=PLAYBOOK, headers=admin)
    assert made.status_code == 201, made.text
    assert made.json()["version"] == 1 and made.json()["disabled"] is False

    # A member's answer draws on it, woven into prose: never as a source.
    answer = env.chat("member", QUESTION).json()
    assert "pb-pallet-surcharge" in _drawn_on(env, answer["conversation_id"])
    assert "14 euros" in answer["answer"]
    assert "pb-pallet-surcharge" not in {s["card_id"] for s in answer["sources"]}
    assert "PLT-7" not in json.dumps(answer)

    edit = {**PLAYBOOK, "reply": "A pallet surcharge of 19 euros applies over 30 kg."}
    edit.pop("id")
    saved = env.client.put(
        f"{PB}/pb-pallet-surcharge", json={**edit, "base_version": 1}, headers=admin
    )
    assert saved.status_code == 200, saved.text
    assert saved.json()["version"] == 2
    assert "19 euros" in env.chat("member", QUESTION).json()["answer"]

    # An edit that began from an older version is refused, not merged over the newer one.
    stale = env.client.put(
        f"{PB}/pb-pallet-surcharge", json={**edit, "base_version": 1}, headers=admin
    )
    assert stale.status_code == 409 and "version 2" in stale.json()["detail"]

    back = env.client.post(f"{PB}/pb-pallet-surcharge/rollback", json={"version": 1}, headers=admin)
    assert back.status_code == 200, back.text
    assert (back.json()["version"], back.json()["restored_from"]) == (3, 1)
    assert "14 euros" in env.chat("member", QUESTION).json()["answer"]

    history = env.client.get(f"{PB}/pb-pallet-surcharge/versions", headers=admin).json()
    assert [v["version"] for v in history] == [3, 2, 1]
    assert history[0]["reply"] == history[2]["reply"] and history[0]["saved_by"].startswith("admin")
    listed = env.client.get(PB, headers=admin).json()
    assert [p["id"] for p in listed] == ["pb-pallet-surcharge"]

    lines = _audit(env, "card:pb-pallet-surcharge")
    assert [line["playbook_version"] for line in lines] == [1, 2, 3]
    assert lines[2]["restored_from"] == 1 and {line["via"] for line in lines} == {"bearer"}

    missing = env.client.post(
        f"{PB}/pb-pallet-surcharge/rollback", json={"version": 9}, headers=admin
    )
    assert missing.status_code == 404 and "versions 1 to 3" in missing.json()["detail"]
    again = env.client.post(PB, json=PLAYBOOK, headers=admin)
    assert again.status_code == 409 and "exists already" in again.json()["detail"]
    assert env.client.get(f"{PB}/nope/versions", headers=admin).status_code == 404
    unknown = env.client.put(f"{PB}/nope", json={**edit, "base_version": 1}, headers=admin)
    assert unknown.status_code == 404


def test_refusals_name_each_field_and_change_nothing(env_both: ApiEnv) -> None:
    env = env_both
    bad = {
        "id": "Bad Id!",
        "title": "",
        "body": "x",
        "reply": "See https://intranet.example/x",
        "audiences": ["Enterprise Plan"],
    }
    refused = env.client.post(PB, json=bad, headers=env.auth("admin"))
    assert refused.status_code == 422, refused.text
    fields = {p["loc"][-1]: p["msg"] for p in refused.json()["detail"]}
    assert {"id", "title", "reply", "audiences"} <= set(fields), fields
    assert "link" in fields["reply"] and "group name" in fields["audiences"]
    twice = {**PLAYBOOK, "id": "pb-twice", "body": "Notes.\n\n## Tell the member\n\nHi."}
    both = env.client.post(PB, json=twice, headers=env.auth("admin"))
    assert both.status_code == 422 and both.json()["detail"][0]["loc"] == ["body", "reply"]
    # A playbook is internal: the form has no url.
    with_url = env.client.post(
        PB, json={**PLAYBOOK, "id": "pb-url", "url": "https://x.example"}, headers=env.auth("admin")
    )
    assert with_url.status_code == 422
    some = env.client.get("/api/v1/admin/cards?limit=1", headers=env.auth("admin")).json()
    file_card = some["cards"][0]["id"]
    taken = env.client.post(PB, json={**PLAYBOOK, "id": file_card}, headers=env.auth("admin"))
    assert taken.status_code == 409 and "another source" in taken.json()["detail"]
    with env.runtime.session_factory() as session:
        assert card_versions.versions(session, "pb-twice") == []


def test_members_may_not_write_or_disable(env_both: ApiEnv) -> None:
    env = env_both
    member = env.auth("member")
    assert env.client.post(PB, json={**PLAYBOOK, "id": "pb-m"}, headers=member).status_code == 403
    assert env.client.get(PB, headers=member).status_code == 403
    assert env.client.post("/api/v1/admin/cards/x/disable", headers=member).status_code == 403
    assert (
        env.client.post(f"{PB}/x/rollback", json={"version": 1}, headers=member).status_code == 403
    )


def test_a_disabled_card_is_served_by_no_path_until_enabled(env_both: ApiEnv) -> None:
    env = env_both
    admin = env.auth("admin")
    question = "How long do refunds take?"
    served = env.chat("member", question).json()
    drawn = _drawn_on(env, served["conversation_id"])
    card_id = sorted(drawn)[0]

    off = env.client.post(f"/api/v1/admin/cards/{card_id}/disable", headers=admin)
    assert off.status_code == 200, off.text
    assert off.json()["disabled_at"] is not None and off.json()["disabled_by"].startswith("admin")
    twice = env.client.post(f"/api/v1/admin/cards/{card_id}/disable", headers=admin)
    assert twice.status_code == 409 and "disabled already" in twice.json()["detail"]

    after = env.chat("member", question).json()
    assert card_id not in _drawn_on(env, after["conversation_id"])
    assert card_id not in {s["card_id"] for s in after["sources"]}
    for who in ("member", "admin"):
        found = env.client.post("/api/v1/search", json={"query": question}, headers=env.auth(who))
        assert card_id not in {r["card_id"] for r in found.json()["results"]}
    # Kept, and shown as disabled.
    card = env.client.get(f"/api/v1/admin/cards/{card_id}", headers=admin).json()
    assert card["disabled_at"] is not None

    # An ingest of its source does not bring it back.
    row = card
    again = Card(
        id=row["id"],
        title=row["title"],
        body=row["body"],
        url=row["url"],
        license=row["license"],
        reply=row["reply"],
        audiences=tuple(row["audiences"]),
        metadata=row["metadata"],
    )
    report = ingest_cards(
        [again],
        env.runtime.settings,
        embedder=env.runtime.embedder.model,
        session_factory=env.runtime.session_factory,
        progress=False,
    )
    assert report.disabled == 1 and report.added == report.updated == 0
    assert card_id not in _drawn_on(env, env.chat("member", question).json()["conversation_id"])

    on = env.client.post(f"/api/v1/admin/cards/{card_id}/enable", headers=admin)
    assert on.status_code == 200 and on.json()["disabled_at"] is None
    assert card_id in _drawn_on(env, env.chat("member", question).json()["conversation_id"])
    assert [list(line)[-1] for line in _audit(env, f"card:{card_id}")] == ["disabled", "enabled"]
    assert env.client.post("/api/v1/admin/cards/nope/disable", headers=admin).status_code == 404


def test_no_other_ingest_removes_or_overwrites_a_playbook(env_both: ApiEnv) -> None:
    env = env_both
    made = env.client.post(PB, json={**PLAYBOOK, "id": "pb-kept"}, headers=env.auth("admin"))
    assert made.status_code == 201, made.text
    settings = env.runtime.settings
    clash = Card(id="pb-kept", title="A file card", body="Overwrites the playbook?")
    # `citewall ingest --prune` of a file that lacks it, and a file that names its id.
    listed = env.client.get("/api/v1/admin/cards?limit=500", headers=env.auth("admin")).json()
    others = {c["id"] for c in listed["cards"]} - {"pb-kept"}
    report = ingest_cards(
        [clash],
        settings,
        embedder=env.runtime.embedder.model,
        session_factory=env.runtime.session_factory,
        prune=True,
        keep_ids=others,
        progress=False,
    )
    assert report.refused == 1 and "playbook" in str(report.errors[0])
    card = env.client.get("/api/v1/admin/cards/pb-kept", headers=env.auth("admin")).json()
    assert card["title"] == PLAYBOOK["title"]
    with env.runtime.session_factory() as session:
        assert "pb-kept" in kb_sources.cards_of_kind(session, "playbooks")
