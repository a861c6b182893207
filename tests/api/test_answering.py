"""answer_status on every member path, small talk, follow-ups retrieved with the conversation
(the query stored on the retrieval events), and the knowledge-gaps report."""

from __future__ import annotations

import json
from typing import Any

from citewall.chat.pipeline import NOTHING_FOUND
from citewall.chat.smalltalk import GREETING_REPLY
from citewall.text.language import NAMES, REPLIES

from .conftest import EXTERNAL_QUESTION, ApiEnv

UNCOVERED = "where is your office in berlin"
SPANISH = "¿Cuánto tardan los reembolsos en llegar a mi tarjeta?"
SPANISH_REPLY = REPLIES["es"].format(kb=NAMES["es"]["en"])


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
    """Small talk is recorded as what it is (``small_talk``), in the reply and in history."""
    body = env_both.chat("member", "hi").json()
    assert (body["answer_status"], body["answer"], body["sources"]) == (
        "small_talk",
        GREETING_REPLY,
        [],
    )
    view = admin_view(env_both, body["conversation_id"])
    assert view["retrieval_events"] == [] and view["messages"][1]["support"] is None
    history = env_both.client.get(
        f"/api/v1/conversations/{body['conversation_id']}", headers=env_both.auth("member")
    ).json()
    assert [m["answer_status"] for m in history["messages"]] == [None, "small_talk"]


def test_a_follow_up_is_retrieved_with_the_question_before_it(env_both: ApiEnv) -> None:
    first = env_both.chat("member", "How do I void an unused label?").json()
    follow = env_both.chat("member", "and for swiftfreight?", first["conversation_id"]).json()
    assert follow["answer_status"] == "answered"
    events = admin_view(env_both, first["conversation_id"])["retrieval_events"]
    queries = {e["message_id"]: e["query"] for e in events}
    assert queries[follow["message_id"]] == "How do I void an unused label? and for swiftfreight?"
    assert queries[first["message_id"]] == "How do I void an unused label?"
    assert "void-label" in " ".join(s["card_id"] for s in follow["sources"])


def test_a_pronoun_follow_up_is_retrieved_with_the_previous_topic(env_both: ApiEnv) -> None:
    first = env_both.chat("member", "How long do refunds take?").json()
    follow = env_both.chat(
        "member", "when do they show up on my card?", first["conversation_id"]
    ).json()
    events = admin_view(env_both, first["conversation_id"])["retrieval_events"]
    queries = {e["message_id"]: e["query"] for e in events}
    assert queries[follow["message_id"]] == (
        "How long do refunds take? when do they show up on my card?"
    )
    assert "help-refunds-how-long" in {s["card_id"] for s in follow["sources"]}


def test_a_question_in_another_language_is_told_which_language_is_answered(
    env_both: ApiEnv,
) -> None:
    body = env_both.chat("member", SPANISH).json()
    assert (body["answer_status"], body["answer"], body["sources"]) == (
        "other_language",
        SPANISH_REPLY,
        [],
    )
    assert history(env_both, body["conversation_id"])[1]["answer_status"] == "other_language"
    view = admin_view(env_both, body["conversation_id"])
    # Nothing was retrieved for it: it is not a knowledge gap either.
    assert view["retrieval_events"] == []
    assert view["messages"][1]["answer_status"] == "other_language"


def stream_events(env: ApiEnv, message: str) -> list[tuple[str, dict[str, Any]]]:
    r = env.client.post(
        "/api/v1/chat/stream", json={"message": message}, headers=env.auth("member")
    )
    assert r.status_code == 200
    out = []
    for block in r.text.split("\n\n"):
        lines = block.splitlines()
        name = next((ln[len("event:") :].strip() for ln in lines if ln.startswith("event:")), "")
        data = [ln[len("data:") :] for ln in lines if ln.startswith("data:")]
        if name and data:
            out.append((name, json.loads("\n".join(data))))
    return out


def test_the_stream_s_final_event_carries_the_status(env_both: ApiEnv) -> None:
    finals = [data for name, data in stream_events(env_both, UNCOVERED) if name == "final"]
    assert [(f["answer_status"], f["sources"]) for f in finals] == [("not_found", [])]


def test_the_stream_answers_another_language_in_it(env_both: ApiEnv) -> None:
    events = stream_events(env_both, SPANISH)
    finals = [data for name, data in events if name == "final"]
    assert [(f["answer_status"], f["sources"]) for f in finals] == [("other_language", [])]
    assert SPANISH_REPLY in json.dumps([d for _, d in events], ensure_ascii=False)


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
