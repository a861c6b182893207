"""A turn's history comes from the stored messages (content as stored, markers kept)."""

from __future__ import annotations

from citewall.chat.turn import plan_turn, title_from
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
