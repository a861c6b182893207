"""The admin overview's headline numbers: questions, "not found" answers and answers rated
"Not helpful", with their shares of the answers, for the window asked."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from citewall.chat.smalltalk import GREETING_REPLY
from citewall.storage.models import Message
from citewall.storage.turns import AnswerRecord, TurnRecord, save_turn

from .conftest import INTERNAL_QUESTIONS, ApiEnv

HEADLINE = "/api/v1/admin/analytics/headline"


def test_headline_numbers_count_questions_not_found_and_rated_down(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    before = env.client.get(HEADLINE, headers=env.auth("admin")).json()
    answered = env.chat("member", INTERNAL_QUESTIONS[0]).json()
    missed = env.chat("member", "What is the airspeed of an unladen swallow on Mars?").json()
    assert missed["answer_status"] == "not_found", missed
    rated = env.client.put(
        f"/api/v1/messages/{answered['message_id']}/feedback",
        json={"rating": "down"},
        headers=env.auth("member"),
    )
    assert rated.status_code == 200, rated.text

    after = env.client.get(HEADLINE, headers=env.auth("admin")).json()
    assert after["questions"] - before["questions"] == 2
    assert after["answers"] - before["answers"] == 2
    assert after["not_found"] - before["not_found"] == 1
    assert after["rated_down"] - before["rated_down"] == 1
    assert after["not_found_rate"] == round(after["not_found"] / after["answers"], 4)
    assert after["rated_down_rate"] == round(after["rated_down"] / after["answers"], 4)

    future = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    empty = env.client.get(HEADLINE, params={"since": future}, headers=env.auth("admin")).json()
    assert (empty["questions"], empty["not_found_rate"], empty["rated_down_rate"]) == (
        0,
        None,
        None,
    )
    assert env.client.get(HEADLINE, headers=env.auth("member")).status_code == 403


def test_small_talk_is_counted_apart_and_never_as_not_found(env_both: ApiEnv) -> None:
    """A greeting asks nothing: it is neither a question nor a "not found" answer."""
    env = env_both
    before = env.client.get(HEADLINE, headers=env.auth("admin")).json()
    greeted = env.chat("member", "hi").json()
    env.chat("member", "thanks", greeted["conversation_id"])
    missed = env.chat("member", "What is the airspeed of an unladen swallow on Mars?").json()
    assert missed["answer_status"] == "not_found", missed

    after = env.client.get(HEADLINE, headers=env.auth("admin")).json()
    delta = {k: after[k] - before[k] for k in ("questions", "answers", "not_found", "small_talk")}
    assert delta == {"questions": 1, "answers": 1, "not_found": 1, "small_talk": 2}


def test_small_talk_is_counted_from_its_status_not_from_its_text(env_both: ApiEnv) -> None:
    """The turn records small talk as such: a reply worded unlike today's is still small talk,
    and a "not found" answer is never counted as small talk for its wording."""
    env = env_both
    cid = env.chat("member", "hi").json()["conversation_id"]
    before = env.client.get(HEADLINE, headers=env.auth("admin")).json()
    with env.runtime.session_factory() as session:
        reworded = AnswerRecord(content="Hello! What can I look up?", answer_status="small_talk")
        save_turn(session, TurnRecord(conversation_id=cid, question="hey", answer=reworded))
        # Stored before the status existed: a small-talk reply kept as a not_found answer.
        legacy = AnswerRecord(content=GREETING_REPLY, answer_status="not_found")
        save_turn(session, TurnRecord(conversation_id=cid, question="hello", answer=legacy))
        statuses = [m.answer_status for m in session.query(Message).filter_by(conversation_id=cid)]
    assert statuses.count("small_talk") == 2, statuses

    after = env.client.get(HEADLINE, headers=env.auth("admin")).json()
    delta = {k: after[k] - before[k] for k in ("questions", "answers", "not_found", "small_talk")}
    assert delta == {"questions": 0, "answers": 0, "not_found": 0, "small_talk": 2}
