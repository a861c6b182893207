"""A turn's history comes from the stored messages (content as stored, markers kept)."""

from __future__ import annotations

from citewall.chat.titles import title_from
from citewall.chat.turn import plan_turn
from citewall.storage import conversations

from .conftest import INTERNAL_QUESTIONS, ApiEnv


def test_history_for_the_next_turn_is_the_stored_conversation(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    cid = env.chat("member", INTERNAL_QUESTIONS[0]).json()["conversation_id"]
    with env.runtime.session_factory() as session:
        stored = conversations.list_messages(session, cid)
        plan = plan_turn(
            session,
            user_id=env.user_ids["member"],
            question="and then?",
            conversation_id=cid,
            max_conversation_messages=10,
        )
    assert not plan.is_new and plan.conversation_id == cid
    assert [(t.role, t.content) for t in plan.history] == [(m.role, m.content) for m in stored]
    assert "[" in plan.history[1].content  # the generator sees markers, the member never does


def test_a_new_conversation_gets_a_short_title_from_the_question() -> None:
    assert title_from("  How   long\ndo refunds take? ") == "How long do refunds take?"
    long = title_from("word " * 100)
    assert len(long) <= 81 and long.endswith("…")


def test_a_greeting_keeps_the_neutral_title_until_the_first_question(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    hello = env.chat("member", "hello there")
    assert hello.status_code == 200, hello.text
    cid = hello.json()["conversation_id"]
    assert hello.json()["title"] == "New conversation"
    asked = env.chat("member", INTERNAL_QUESTIONS[0], cid)
    assert asked.json()["title"] == " ".join(INTERNAL_QUESTIONS[0].split())
    env.chat("member", "Something else entirely?", cid)
    listed = env.client.get("/api/v1/conversations", headers=env.auth("member")).json()
    titles = {c["id"]: c["title"] for c in listed}
    assert titles[cid] == asked.json()["title"]


def test_a_title_the_member_chose_is_kept(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    cid = env.chat("member", "hi").json()["conversation_id"]
    renamed = env.client.patch(
        f"/api/v1/conversations/{cid}", json={"title": "Mine"}, headers=env.auth("member")
    )
    assert renamed.status_code == 200, renamed.text
    assert env.chat("member", INTERNAL_QUESTIONS[0], cid).json()["title"] == "Mine"
