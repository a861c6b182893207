"""Answering the last question again: the same SSE stream as a chat turn, a new stored answer
that records the one it replaced (which stays), no new question; the model's history holds the
latest answer to each question. SQLite and PostgreSQL."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from builders import add_conversation

from citewall.chat.turn import plan_regeneration, plan_turn
from citewall.config import load_settings
from citewall.errors import ConversationFullError
from citewall.storage.conversations import list_messages

from .conftest import EXTERNAL_QUESTION, INTERNAL_QUESTIONS, ApiEnv, KbFacts
from .test_flows import sse_events

MARKER = re.compile(r"[\[［]\s*[0-9０-９]")


def regenerate(env: ApiEnv, conversation_id: str, who: str = "member") -> Any:
    return env.client.post(
        f"/api/v1/conversations/{conversation_id}/regenerate", headers=env.auth(who)
    )


def test_regenerate_streams_a_new_answer_and_keeps_the_old_one(
    env_both: ApiEnv, kb_facts: KbFacts
) -> None:
    env = env_both
    first = env.chat("member", INTERNAL_QUESTIONS[0]).json()
    cid = first["conversation_id"]
    r = regenerate(env, cid)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["cache-control"] == "no-store"
    events = sse_events(r.text)
    names = [n for n, _ in events]
    assert names[0] == "meta" and names[-1] == "final" and "token" in names
    assert events[0][1] == {"conversation_id": cid}
    final = events[-1][1]
    assert set(final) == set(first)  # the same fields as POST /api/v1/chat
    streamed = "".join(d["delta"] for n, d in events if n == "token")
    assert streamed == final["answer"] and not MARKER.search(streamed)
    assert final["message_id"] != first["message_id"]
    assert not {s["card_id"] for s in final["sources"]} & kb_facts.internal_ids

    messages = env.client.get(f"/api/v1/conversations/{cid}", headers=env.auth("member")).json()
    assert [(m["role"], m["regenerated_from"]) for m in messages["messages"]] == [
        ("user", None),
        ("assistant", None),
        ("assistant", first["message_id"]),
    ]
    assert messages["messages"][2]["id"] == final["message_id"]
    assert messages["messages"][2]["content"] == final["answer"]
    listed = env.client.get("/api/v1/conversations", headers=env.auth("member")).json()
    assert next(c for c in listed if c["id"] == cid)["message_count"] == 3
    admin = env.client.get(f"/api/v1/admin/conversations/{cid}", headers=env.auth("admin"))
    assert admin.json()["messages"][2]["regenerated_from"] == first["message_id"]
    assert {e["message_id"] for e in admin.json()["retrieval_events"]} == {
        first["message_id"],
        final["message_id"],
    }

    # Again: it replaces the latest answer, and the follow-up goes on after it.
    second = sse_events(regenerate(env, cid).text)[-1][1]
    follow = env.chat("member", EXTERNAL_QUESTION, cid).json()
    roles = [
        (m["role"], m["regenerated_from"])
        for m in env.client.get(f"/api/v1/conversations/{cid}", headers=env.auth("member")).json()[
            "messages"
        ]
    ]
    assert roles == [
        ("user", None),
        ("assistant", None),
        ("assistant", first["message_id"]),
        ("assistant", final["message_id"]),
        ("user", None),
        ("assistant", None),
    ]
    assert follow["conversation_id"] == cid and second["message_id"] != final["message_id"]


def test_the_models_history_holds_the_latest_answer_to_each_question(env_both: ApiEnv) -> None:
    env = env_both
    first = env.chat("member", INTERNAL_QUESTIONS[1]).json()
    cid = first["conversation_id"]
    final = sse_events(regenerate(env, cid).text)[-1][1]
    env.chat("member", EXTERNAL_QUESTION, cid)
    member = env.user_ids["member"]
    with env.runtime.session_factory() as session:
        stored = {str(m.id): m.content for m in list_messages(session, cid)}
        plan = plan_turn(
            session,
            user_id=member,
            question="and for annual plans?",
            conversation_id=cid,
            max_conversation_messages=50,
        )
        again = plan_regeneration(
            session, user_id=member, conversation_id=cid, max_conversation_messages=50
        )
    history = [(t.role, t.content) for t in plan.history]
    # Two answers to the first question are stored; the history has one, the latest.
    assert len(stored) == 5
    assert [r for r, _ in history] == ["user", "assistant", "user", "assistant"]
    assert history[:2] == [
        ("user", INTERNAL_QUESTIONS[1]),
        ("assistant", stored[final["message_id"]]),
    ]
    # Regenerating answers the last question with what came before it as history.
    assert again.question == EXTERNAL_QUESTION and again.regenerates is not None
    assert [(t.role, t.content) for t in again.history] == history[:2]


def test_regenerate_refuses_what_it_cannot_answer_again(env_both: ApiEnv) -> None:
    env = env_both
    theirs = env.chat("other", EXTERNAL_QUESTION).json()["conversation_id"]
    for cid in (theirs, str(uuid.uuid4()), "not-a-uuid"):
        r = regenerate(env, cid)
        assert r.status_code == 404, r.text
        assert r.json() == {"detail": f"conversation {cid!r} not found"}
    with env.runtime.session_factory() as session:
        empty = add_conversation(session, env.user_ids["member"]).id
    r = regenerate(env, empty)
    assert r.status_code == 409, r.text
    assert "no question to answer again" in r.json()["detail"]
    assert env.client.post(f"/api/v1/conversations/{theirs}/regenerate").status_code == 401
    # A full conversation has no room for one more answer.
    mine = env.chat("member", EXTERNAL_QUESTION).json()["conversation_id"]
    with env.runtime.session_factory() as session, pytest.raises(ConversationFullError):
        plan_regeneration(
            session,
            user_id=env.user_ids["member"],
            conversation_id=mine,
            max_conversation_messages=2,
        )


def test_regenerate_varies_only_with_a_model() -> None:
    """The web offers Regenerate only when asking again can give another answer."""
    assert load_settings(generator="extractive").regenerate_varies is False
    model = load_settings(generator="openai", openai_base_url="http://127.0.0.1:9/v1")
    assert model.regenerate_varies is True
