"""End-to-end member and admin flows over a real runtime, on SQLite and PostgreSQL.

The history test is the lock of decision 0002
(docs/decisions/0002-external-only-citations.md): the stored row stays FULL (internal sources,
markers in content) while the served payload is external-only and prose-only.
"""

from __future__ import annotations

import json
import re
from typing import Any

from citewall.citations.markers import parse_markers

from .conftest import EXTERNAL_QUESTION, INTERNAL_QUESTIONS, ApiEnv, KbFacts

MARKER = re.compile(r"[\[［]\s*[0-9０-９]")


def sse_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Parse an SSE body into (event, data) pairs."""
    events = []
    for frame in text.split("\n\n"):
        if not frame.strip():
            continue
        name, data = "message", ""
        for line in frame.splitlines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data += line[5:].strip()
        events.append((name, json.loads(data)))
    return events


def test_chat_then_history_stays_full_in_storage_and_filtered_when_served(
    env_both: ApiEnv, kb_facts: KbFacts
) -> None:
    env = env_both
    r = env.chat("member", INTERNAL_QUESTIONS[0])
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {
        "conversation_id",
        "title",
        "message_id",
        "answer",
        "answer_status",
        "sources",
        "hybrid_path",
        "created_at",
    }
    assert body["answer_status"] == "answered"
    assert body["hybrid_path"] == "rrf_only"  # reranker disabled in these tests
    assert not MARKER.search(body["answer"]) and body["answer"].strip()
    assert all(s["card_id"] in kb_facts.external_ids for s in body["sources"])
    assert all(s["url"].startswith("https://") for s in body["sources"])

    # The stored row is FULL: internal cards among the sources, markers in the content.
    from citewall.storage import conversations

    with env.runtime.session_factory() as session:
        stored = conversations.list_messages(session, body["conversation_id"])
    assert [m.role for m in stored] == ["user", "assistant"]
    assistant = stored[1]
    assert str(assistant.id) == body["message_id"]
    stored_ids = {s["card_id"] for s in assistant.sources}
    assert stored_ids & kb_facts.internal_ids, "an internal card must have been cited"
    assert parse_markers(assistant.content), "stored content keeps its [n] markers"
    internal = next(s for s in assistant.sources if s["card_id"] in kb_facts.internal_ids)
    assert "author" in internal["metadata"] and internal["title"] in kb_facts.internal_titles

    # History reload: prose only, external only, same answer as the chat response.
    h = env.client.get(
        f"/api/v1/conversations/{body['conversation_id']}", headers=env.auth("member")
    )
    assert h.status_code == 200, h.text
    hist = h.json()
    assert [m["role"] for m in hist["messages"]] == ["user", "assistant"]
    served = hist["messages"][1]
    assert served["content"] == body["answer"]
    assert served["sources"] == body["sources"]
    assert not ({s["card_id"] for s in served["sources"]} & kb_facts.internal_ids)
    for s in served["sources"]:
        assert set(s["metadata"]) <= {"url", "license", "title", "section", "product", "updated"}

    # The admin sees the stored row in full.
    a = env.client.get(
        f"/api/v1/admin/conversations/{body['conversation_id']}", headers=env.auth("admin")
    )
    assert a.status_code == 200, a.text
    full = a.json()
    assert full["messages"][1]["content"] == assistant.content
    assert full["messages"][1]["sources"] == assistant.sources
    assert {e["card_id"] for e in full["retrieval_events"]} >= stored_ids


def test_follow_up_uses_the_same_conversation_and_lists_it(env_both: ApiEnv) -> None:
    env = env_both
    first = env.chat("member", INTERNAL_QUESTIONS[1]).json()
    second = env.chat("member", EXTERNAL_QUESTION, first["conversation_id"])
    assert second.status_code == 200, second.text
    assert second.json()["conversation_id"] == first["conversation_id"]
    listing = env.client.get("/api/v1/conversations", headers=env.auth("member")).json()
    mine = next(c for c in listing if c["id"] == first["conversation_id"])
    assert mine["message_count"] == 4
    assert set(mine) == {"id", "title", "created_at", "updated_at", "message_count"}


def test_member_cannot_see_another_members_conversation(env_both: ApiEnv) -> None:
    env = env_both
    theirs = env.chat("other", INTERNAL_QUESTIONS[2]).json()["conversation_id"]
    for path in (f"/api/v1/conversations/{theirs}",):
        r = env.client.get(path, headers=env.auth("member"))
        assert r.status_code == 404, r.text
    # Nor continue it, nor see it listed.
    r = env.chat("member", "and then?", theirs)
    assert r.status_code == 404
    listing = env.client.get("/api/v1/conversations", headers=env.auth("member")).json()
    assert theirs not in {c["id"] for c in listing}
    # The admin sees everyone's.
    all_ids = {
        c["id"]
        for c in env.client.get(
            "/api/v1/admin/conversations?limit=500", headers=env.auth("admin")
        ).json()
    }
    assert theirs in all_ids


def test_stream_emits_meta_tokens_and_one_filtered_final(
    env_both: ApiEnv, kb_facts: KbFacts
) -> None:
    env = env_both
    r = env.client.post(
        "/api/v1/chat/stream",
        json={"message": INTERNAL_QUESTIONS[0], "conversation_id": None},
        headers=env.auth("member"),
    )
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    events = sse_events(r.text)
    names = [n for n, _ in events]
    assert names[0] == "meta" and names[-1] == "final" and names.count("final") == 1
    assert "token" in names and "error" not in names
    final = events[-1][1]
    streamed = "".join(d["delta"] for n, d in events if n == "token")
    assert not MARKER.search(streamed)
    assert streamed == final["answer"]
    assert final["conversation_id"] == events[0][1]["conversation_id"]
    assert not ({s["card_id"] for s in final["sources"]} & kb_facts.internal_ids)
    # What was streamed is what history reload shows; the stored row is full.
    hist = env.client.get(
        f"/api/v1/conversations/{final['conversation_id']}", headers=env.auth("member")
    ).json()
    assert hist["messages"][1]["content"] == final["answer"]
    assert hist["messages"][1]["id"] == final["message_id"]
    from citewall.storage import conversations

    with env.runtime.session_factory() as session:
        stored = conversations.list_messages(session, final["conversation_id"])
    assert {s["card_id"] for s in stored[1].sources} & kb_facts.internal_ids


def test_search_is_external_only_for_members_and_full_for_admins(
    env_both: ApiEnv, kb_facts: KbFacts
) -> None:
    env = env_both
    q = {"query": "voided label refund not arrived duplicate charge", "limit": 10}
    admin = env.client.post("/api/v1/admin/search", json=q, headers=env.auth("admin"))
    assert admin.status_code == 200, admin.text
    admin_ids = {h["card_id"] for h in admin.json()["results"]}
    assert admin_ids & kb_facts.internal_ids, "the query must match internal cards"
    member = env.client.post("/api/v1/search", json=q, headers=env.auth("member"))
    assert member.status_code == 200, member.text
    results = member.json()["results"]
    assert results, "external cards match too"
    assert {r["card_id"] for r in results} <= kb_facts.external_ids
    assert all(set(r) == {"card_id", "title", "url", "license", "excerpt"} for r in results)


def test_me_and_admin_catalogue(env_both: ApiEnv, kb_facts: KbFacts) -> None:
    env = env_both
    assert env.client.get("/api/v1/me", headers=env.auth("member")).json()["role"] == "member"
    assert env.client.get("/api/v1/me", headers=env.auth("admin")).json()["role"] == "admin"
    page = env.client.get(
        "/api/v1/admin/cards?external=false&limit=100", headers=env.auth("admin")
    ).json()
    assert {c["id"] for c in page["cards"]} == kb_facts.internal_ids
    one = next(iter(kb_facts.internal_ids))
    card = env.client.get(f"/api/v1/admin/cards/{one}", headers=env.auth("admin")).json()
    assert card["id"] == one and "author" in card["metadata"] and card["body"]
    assert env.client.get("/api/v1/admin/cards/nope", headers=env.auth("admin")).status_code == 404
    # A playbook's member-facing reply is stored and shown to admins beside its staff notes.
    playbook = "pb-labels-duplicate-label-charges"
    card = env.client.get(f"/api/v1/admin/cards/{playbook}", headers=env.auth("admin")).json()
    assert card["reply"].startswith("A double click on Purchase while the carrier is slow")
    assert "Helm" in card["body"] and "Helm" not in card["reply"]
    listed = {c["id"]: c for c in page["cards"]}
    assert listed[playbook]["reply"] == card["reply"]
    assert listed["pb-refunds-refund-escalation-tier2"]["reply"] is None
