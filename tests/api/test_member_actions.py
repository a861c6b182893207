"""What a member does to their conversations and answers: search, rename, delete (hidden from
them, kept for admins), thumbs up/down with a comment; example questions. Bad input is a 404 or
a 422 naming the problem, never a 500. SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from citewall.storage.conversations import list_messages
from citewall.storage.models import Feedback

from .conftest import EXTERNAL_QUESTION, INTERNAL_QUESTIONS, ApiEnv, KbFacts

SUMMARY_KEYS = {"id", "title", "created_at", "updated_at", "message_count"}
FEEDBACK_KEYS = {"message_id", "rating", "comment", "updated_at"}


def get(env: ApiEnv, path: str, who: str = "member", **params: Any) -> Any:
    return env.client.get(path, params=params, headers=env.auth(who))


def history(env: ApiEnv, conversation_id: str, who: str = "member") -> Any:
    return get(env, f"/api/v1/conversations/{conversation_id}", who)


def rate(env: ApiEnv, message_id: str, body: Any, who: str = "member") -> Any:
    return env.client.put(
        f"/api/v1/messages/{message_id}/feedback", json=body, headers=env.auth(who)
    )


def unrate(env: ApiEnv, message_id: str, who: str = "member") -> Any:
    return env.client.delete(f"/api/v1/messages/{message_id}/feedback", headers=env.auth(who))


def problems(response: Any) -> str:
    """The 422 messages of a validation error, joined."""
    assert response.status_code == 422, response.text
    detail = response.json()["detail"]
    return " | ".join(d["msg"] for d in detail) if isinstance(detail, list) else detail


def test_search_pages_and_never_lists_other_members(env_both: ApiEnv) -> None:
    env = env_both
    refunds = env.chat("member", EXTERNAL_QUESTION).json()["conversation_id"]
    labels = env.chat("member", "How do I void an unused LABEL?").json()["conversation_id"]
    env.chat("member", "Something about pallets", labels)
    env.chat("other", "How long do refunds take for me?")
    found = get(env, "/api/v1/conversations", q="REFUNDS").json()
    assert refunds in {c["id"] for c in found} and labels not in {c["id"] for c in found}
    assert all(set(c) == SUMMARY_KEYS for c in found)
    # A later question of the conversation matches too.
    assert labels in {c["id"] for c in get(env, "/api/v1/conversations", q="pallets").json()}
    assert get(env, "/api/v1/conversations", q="no such words anywhere").json() == []
    assert get(env, "/api/v1/conversations", q="100%_").json() == []
    # Paging: a full page means "show older".
    page = get(env, "/api/v1/conversations", limit=1).json()
    older = get(env, "/api/v1/conversations", limit=1, offset=1).json()
    assert len(page) == len(older) == 1 and page[0]["id"] != older[0]["id"]
    assert "at most 200 characters" in problems(get(env, "/api/v1/conversations", q="x" * 201))


def test_rename(env_both: ApiEnv) -> None:
    env = env_both
    first = env.chat("member", INTERNAL_QUESTIONS[0]).json()
    cid = first["conversation_id"]
    theirs = env.chat("other", INTERNAL_QUESTIONS[1]).json()["conversation_id"]
    listed_before = {c["id"]: c for c in get(env, "/api/v1/conversations", limit=200).json()}

    def patch(conversation_id: str, body: Any, who: str = "member") -> Any:
        return env.client.patch(
            f"/api/v1/conversations/{conversation_id}", json=body, headers=env.auth(who)
        )

    r = patch(cid, {"title": "  My   refund\tquestions  "})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == SUMMARY_KEYS
    assert body["title"] == "My refund questions" and body["message_count"] == 2
    assert body["updated_at"] == listed_before[cid]["updated_at"]  # renaming is not activity
    assert history(env, cid).json()["title"] == "My refund questions"
    assert patch(cid, {"title": "ü" * 200}).json()["title"] == "ü" * 200

    assert "title has 201 characters; the limit is 200" in problems(
        patch(cid, {"title": "x" * 201})
    )
    assert "title is empty or whitespace only" in problems(patch(cid, {"title": " \n "}))
    assert "NUL" in problems(patch(cid, {"title": "a\x00b"}))
    for bad in ({}, {"title": None}, {"title": 5}, {"title": "ok", "extra": 1}):
        assert patch(cid, bad).status_code == 422, bad
    for other in (theirs, str(uuid.uuid4()), "not-a-uuid"):
        r = patch(other, {"title": "mine now"})
        assert r.status_code == 404, r.text
        assert r.json() == {"detail": f"conversation {other!r} not found"}
    assert history(env, theirs, "other").json()["title"] != "mine now"


def test_delete_hides_the_conversation_from_its_member_only(
    env_both: ApiEnv, kb_facts: KbFacts
) -> None:
    env = env_both
    turn = env.chat("member", INTERNAL_QUESTIONS[0]).json()
    cid = turn["conversation_id"]
    assert rate(env, turn["message_id"], {"rating": "up"}).status_code == 200
    r = env.client.delete(f"/api/v1/conversations/{cid}", headers=env.auth("member"))
    assert r.status_code == 204 and r.content == b""
    expected = {"detail": f"conversation {cid!r} not found"}
    # Everything member-facing now treats it as unknown, with the unknown id's answer.
    for response in (
        history(env, cid),
        env.chat("member", "and then?", cid),
        env.client.post(
            "/api/v1/chat/stream",
            json={"message": "and then?", "conversation_id": cid},
            headers=env.auth("member"),
        ),
        env.client.post(f"/api/v1/conversations/{cid}/regenerate", headers=env.auth("member")),
        env.client.patch(
            f"/api/v1/conversations/{cid}", json={"title": "x"}, headers=env.auth("member")
        ),
        env.client.delete(f"/api/v1/conversations/{cid}", headers=env.auth("member")),
    ):
        assert response.status_code == 404, response.text
        assert response.json() == expected
    for response in (
        rate(env, turn["message_id"], {"rating": "down"}),
        unrate(env, turn["message_id"]),
    ):
        assert response.status_code == 404, response.text
    assert cid not in {c["id"] for c in get(env, "/api/v1/conversations", limit=200).json()}
    # Another member cannot delete mine; an unknown id is the same 404.
    mine = env.chat("member", EXTERNAL_QUESTION).json()["conversation_id"]
    for who, target in (("other", mine), ("member", str(uuid.uuid4())), ("member", "nope")):
        r = env.client.delete(f"/api/v1/conversations/{target}", headers=env.auth(who))
        assert r.status_code == 404, r.text
    assert history(env, mine).status_code == 200

    # Admins still see it in full, marked hidden, with whose it is and the member's rating.
    listed = {
        c["id"]: c for c in get(env, "/api/v1/admin/conversations", "admin", limit=500).json()
    }
    assert listed[cid]["hidden_at"] is not None and listed[mine]["hidden_at"] is None
    member_name = get(env, "/api/v1/me").json()["name"]
    assert listed[cid]["user_name"] == member_name
    full = get(env, f"/api/v1/admin/conversations/{cid}", "admin").json()
    assert full["hidden_at"] == listed[cid]["hidden_at"] and full["user_name"] == member_name
    assert [m["role"] for m in full["messages"]] == ["user", "assistant"]
    assert full["messages"][1]["feedback"]["rating"] == "up"
    assert full["retrieval_events"], "its retrieval events stay stored"
    assert {s["card_id"] for s in full["messages"][1]["sources"]} & kb_facts.internal_ids


def test_feedback_round_trip(env_both: ApiEnv) -> None:
    env = env_both
    turn = env.chat("member", INTERNAL_QUESTIONS[2]).json()
    answer, cid = turn["message_id"], turn["conversation_id"]

    r = rate(env, answer, {"rating": "down", "comment": "  Missed the annual plan part.  "})
    assert r.status_code == 200, r.text
    first = r.json()
    assert set(first) == FEEDBACK_KEYS
    assert (first["message_id"], first["rating"], first["comment"]) == (
        answer,
        "down",
        "Missed the annual plan part.",
    )
    question, reply = history(env, cid).json()["messages"]
    assert question["feedback"] is None and question["regenerated_from"] is None
    assert reply["feedback"] == first and reply["regenerated_from"] is None

    again = rate(env, answer, {"rating": "up", "comment": "   "}).json()
    assert (again["rating"], again["comment"]) == ("up", None)
    assert rate(env, answer, {"rating": "up"}).json()["comment"] is None
    with env.runtime.session_factory() as session:
        rows = session.query(Feedback).filter(Feedback.message_id == answer).all()
    assert len(rows) == 1, "one rating per member per answer"
    # Nobody else's view changes: another member cannot see or rate it.
    assert history(env, cid, "other").status_code == 404

    assert unrate(env, answer).status_code == 204
    assert history(env, cid).json()["messages"][1]["feedback"] is None
    assert unrate(env, answer).status_code == 204  # nothing to withdraw is fine


def test_feedback_refuses_bad_input_clearly(env_both: ApiEnv) -> None:
    env = env_both
    mine = env.chat("member", EXTERNAL_QUESTION).json()
    theirs = env.chat("other", EXTERNAL_QUESTION).json()
    with env.runtime.session_factory() as session:
        question_id = str(list_messages(session, mine["conversation_id"])[0].id)
    answer = mine["message_id"]

    assert "'up' or 'down'" in problems(rate(env, answer, {"rating": "meh"}))
    assert "'up' or 'down'" in problems(rate(env, answer, {"rating": "UP"}))
    assert "Field required" in problems(rate(env, answer, {"comment": "no rating"}))
    long = problems(rate(env, answer, {"rating": "down", "comment": "x" * 2001}))
    assert "comment has 2001 characters; the limit is 2000" in long
    assert (
        rate(env, answer, {"rating": "down", "comment": " " * 50 + "x" * 2000}).status_code == 200
    )
    assert "NUL" in problems(rate(env, answer, {"rating": "up", "comment": "a\x00"}))
    for bad in ({}, {"rating": "up", "extra": True}, {"rating": "up", "comment": 12}, [1]):
        assert rate(env, answer, bad).status_code == 422, bad
    not_json = env.client.put(
        f"/api/v1/messages/{answer}/feedback",
        content=b"{nope",
        headers={**env.auth("member"), "Content-Type": "application/json"},
    )
    assert not_json.status_code == 400
    for message_id in (theirs["message_id"], question_id, str(uuid.uuid4()), "x" * 300):
        for response in (rate(env, message_id, {"rating": "up"}), unrate(env, message_id)):
            assert response.status_code == 404, response.text
            assert "not found" in response.json()["detail"]
    anonymous = env.client.put(f"/api/v1/messages/{answer}/feedback", json={"rating": "up"})
    assert anonymous.status_code == 401


def test_admin_analytics_count_the_thumbs(env_both: ApiEnv, kb_facts: KbFacts) -> None:
    env = env_both
    up = env.chat("member", INTERNAL_QUESTIONS[0]).json()
    down = env.chat("member", INTERNAL_QUESTIONS[1]).json()
    assert rate(env, up["message_id"], {"rating": "up"}).status_code == 200
    assert (
        rate(env, down["message_id"], {"rating": "down", "comment": "wrong card"}).status_code
        == 200
    )
    with env.runtime.session_factory() as session:
        cited = {
            m: {s["card_id"] for s in list_messages(session, t["conversation_id"])[1].sources}
            for m, t in (("up", up), ("down", down))
        }

    rows = get(env, "/api/v1/admin/analytics/entry-performance", "admin").json()
    by_card = {r["card_id"]: r for r in rows}
    for card in cited["up"] | cited["down"]:
        row = by_card[card]
        assert row["helpful"] >= (card in cited["up"])
        assert row["unhelpful"] >= (card in cited["down"])
        rated = row["helpful"] + row["unhelpful"]
        assert row["helpful_rate"] == (round(row["helpful"] / rated, 4) if rated else None)
    assert all(
        {"helpful", "unhelpful", "helpful_rate", "cite_rate", "last_cited"} <= set(r) for r in rows
    )

    report = get(env, "/api/v1/admin/analytics/feedback", "admin", limit=50).json()
    assert set(report) == {"since", "until", "up", "down", "helpful_rate", "cards", "worst"}
    assert report["up"] >= 1 and report["down"] >= 1
    worst = report["worst"][0]
    assert worst["rating"] == "down"
    ours = next(w for w in report["worst"] if w["message_id"] == down["message_id"])
    assert ours["comment"] == "wrong card" and ours["question"] == INTERNAL_QUESTIONS[1]
    assert ours["conversation_id"] == down["conversation_id"]
    assert ours["user_name"] == get(env, "/api/v1/me").json()["name"]
    assert "[" in ours["answer"], "admins read the answer as stored, markers kept"
    cards = {c["card_id"]: c for c in report["cards"]}
    assert cited["down"] <= set(cards)
    assert any(cards[c]["external"] is False for c in cited["down"] & kb_facts.internal_ids)
    window = get(env, "/api/v1/admin/analytics/feedback", "admin", since="2999-01-01T00:00:00Z")
    assert window.json()["worst"] == [] and window.json()["helpful_rate"] is None
    bad = get(env, "/api/v1/admin/analytics/feedback", "admin", limit=0)
    assert bad.status_code == 422
    assert get(env, "/api/v1/admin/analytics/feedback").status_code == 403


def test_typed_analytics_in_the_openapi(env_both: ApiEnv) -> None:
    spec = env_both.app.openapi()

    def schema_of(path: str) -> dict[str, Any]:
        content = spec["paths"][path]["get"]["responses"]["200"]["content"]
        return dict(content["application/json"]["schema"])

    for path, name in (
        ("/api/v1/admin/analytics/entry-performance", "EntryPerformanceRow"),
        ("/api/v1/admin/analytics/retrieval-events", "RetrievalEventRow"),
    ):
        assert schema_of(path)["items"] == {"$ref": f"#/components/schemas/{name}"}
    assert schema_of("/api/v1/admin/analytics/feedback") == {
        "$ref": "#/components/schemas/FeedbackReport"
    }
    events = spec["components"]["schemas"]["AdminConversation"]["properties"]["retrieval_events"]
    assert events["items"] == {"$ref": "#/components/schemas/RetrievalEventRow"}
    status = spec["components"]["schemas"]["MessagePublic"]["properties"]["answer_status"]
    assert next(s["enum"] for s in status["anyOf"] if "enum" in s) == [
        "answered",
        "not_found",
        "stopped",
        "other_language",
        "small_talk",
    ]


def test_example_questions_come_from_settings(
    env_both: ApiEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = env_both
    assert get(env, "/api/v1/examples").json() == {"questions": []}
    questions = ["How long do refunds take?", "How do I void a label?"]
    monkeypatch.setattr(env.runtime.settings, "example_questions", questions)
    r = get(env, "/api/v1/examples")
    assert r.status_code == 200 and r.json() == {"questions": questions}
    assert env.client.get("/api/v1/examples").status_code == 401
