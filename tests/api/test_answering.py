"""answer_status on every member path, small talk, follow-ups retrieved with the conversation
(the query stored on the retrieval events), and the knowledge-gaps report."""

from __future__ import annotations

import json
from typing import Any

from citewall.chat.pipeline import NOTHING_FOUND
from citewall.chat.smalltalk import GREETING_REPLY

from .conftest import EXTERNAL_QUESTION, ApiEnv

UNCOVERED = "where is your office in berlin"


def admin_view(env: ApiEnv, conversation_id: str) -> dict[str, Any]:
    r = env.client.get(f"/api/v1/admin/conversations/{conversation_id}", headers=env.auth("admin"))
    assert r.status_code == 200, r.text
    return dict(r.json())


def history(env: ApiEnv, conversation_id: str) -> list[dict[str, Any]]:
    r = env.client.get(f"/api/v1/conversations/{conversation_id}", headers=env.auth("member"))
    assert r.status_code == 200, r.text
    return list(r.json()["messages"])


def test_an_answered_question_says_so_everywhere(env_both: ApiEnv) -> None:
    body = env_both.chat("member", EXTERNAL_QUESTION).json()
    assert body["answer_status"] == "answered" and body["sources"]
    assert [m["answer_status"] for m in history(env_both, body["conversation_id"])] == [
        None,
        "answered",
    ]
    stored = admin_view(env_both, body["conversation_id"])["messages"][1]
    assert stored["answer_status"] == "answered" and stored["support"] > 0.4


def test_an_uncovered_question_is_not_found_with_no_kb_text(env_both: ApiEnv) -> None:
    body = env_both.chat("member", UNCOVERED).json()
    assert (body["answer_status"], body["answer"], body["sources"]) == (
        "not_found",
        NOTHING_FOUND,
        [],
    )
    assert history(env_both, body["conversation_id"])[1]["answer_status"] == "not_found"
    view = admin_view(env_both, body["conversation_id"])
    stored = view["messages"][1]
    assert (stored["answer_status"], stored["sources"]) == ("not_found", [])
    assert stored["support"] is not None and stored["support"] < 0.43
    # What was retrieved is still logged (nothing cited), with the query it ran with.
    events = view["retrieval_events"]
    assert events and not any(e["cited"] for e in events)
    assert {e["query"] for e in events} == {UNCOVERED}


def test_small_talk_gets_a_friendly_reply_and_retrieves_nothing(env_both: ApiEnv) -> None:
    body = env_both.chat("member", "hi").json()
    assert (body["answer_status"], body["answer"], body["sources"]) == (
        "not_found",
        GREETING_REPLY,
        [],
    )
    view = admin_view(env_both, body["conversation_id"])
    assert view["retrieval_events"] == [] and view["messages"][1]["support"] is None


def test_a_follow_up_is_retrieved_with_the_question_before_it(env_both: ApiEnv) -> None:
    first = env_both.chat("member", "How do I void an unused label?").json()
    follow = env_both.chat("member", "and for swiftfreight?", first["conversation_id"]).json()
    assert follow["answer_status"] == "answered"
    events = admin_view(env_both, first["conversation_id"])["retrieval_events"]
    queries = {e["message_id"]: e["query"] for e in events}
    assert queries[follow["message_id"]] == "How do I void an unused label? and for swiftfreight?"
    assert queries[first["message_id"]] == "How do I void an unused label?"
    assert "void-label" in " ".join(s["card_id"] for s in follow["sources"])


def test_the_stream_s_final_event_carries_the_status(env_both: ApiEnv) -> None:
    r = env_both.client.post(
        "/api/v1/chat/stream", json={"message": UNCOVERED}, headers=env_both.auth("member")
    )
    assert r.status_code == 200
    finals = [
        json.loads(line[len("data:") :])
        for block in r.text.split("\n\n")
        if "event: final" in block
        for line in block.splitlines()
        if line.startswith("data:")
    ]
    assert [(f["answer_status"], f["sources"]) for f in finals] == [("not_found", [])]


def test_knowledge_gaps_lists_unanswered_questions_for_admins_only(env_both: ApiEnv) -> None:
    for _ in range(2):
        env_both.chat("member", UNCOVERED)
    env_both.chat("member", "thanks")
    r = env_both.client.get(
        "/api/v1/admin/analytics/knowledge-gaps?period=day", headers=env_both.auth("admin")
    )
    assert r.status_code == 200, r.text
    report = r.json()
    groups = {g["question"]: g for g in report["groups"]}
    assert UNCOVERED in groups and "thanks" not in groups
    office = groups[UNCOVERED]
    assert office["count"] >= 2 and office["not_found"] == office["count"]
    assert sum(p["count"] for p in office["per_period"]) == office["count"]
    assert report["low_support_below"] == env_both.runtime.settings.knowledge_gap_support
    member = env_both.client.get(
        "/api/v1/admin/analytics/knowledge-gaps", headers=env_both.auth("member")
    )
    assert member.status_code == 403


def test_small_talk_between_questions_is_not_part_of_the_follow_up(env_both: ApiEnv) -> None:
    first = env_both.chat("member", "How do I void an unused label?").json()
    cid = first["conversation_id"]
    env_both.chat("member", "thanks", cid)
    follow = env_both.chat("member", "and for swiftfreight?", cid).json()
    events = admin_view(env_both, cid)["retrieval_events"]
    queries = {e["message_id"]: e["query"] for e in events}
    assert queries[follow["message_id"]] == "How do I void an unused label? and for swiftfreight?"
