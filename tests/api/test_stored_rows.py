"""Stored rows written before today's rules, or corrupted since: every view still answers.

A row is rewritten in the database after a real turn (SQLite and PostgreSQL), then served.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import update

from .conftest import EXTERNAL_QUESTION, ApiEnv


def rewrite_answer(env: ApiEnv, message_id: str, **values: Any) -> None:
    """Overwrite columns of a stored assistant message, as a legacy writer or corruption would."""
    from citewall.storage.models import Message

    with env.runtime.session_factory() as session:
        session.execute(update(Message).where(Message.id == message_id).values(**values))
        session.commit()


def stored_sources(env: ApiEnv, message_id: str) -> list[dict[str, Any]]:
    from citewall.storage.models import Message

    with env.runtime.session_factory() as session:
        message = session.get(Message, message_id)
        assert message is not None
        return list(message.sources)


def external_turn(env: ApiEnv) -> dict[str, Any]:
    r = env.chat("member", EXTERNAL_QUESTION)
    assert r.status_code == 200, r.text
    body = dict(r.json())
    assert body["sources"], "the question must cite an external card"
    return body


def test_a_score_stored_on_a_non_full_path_is_not_served(env_both: ApiEnv) -> None:
    env = env_both
    turn = external_turn(env)
    sources = [{**s, "retrieved_score": 87} for s in stored_sources(env, turn["message_id"])]
    rewrite_answer(env, turn["message_id"], sources=sources, hybrid_path="rrf_only")

    h = env.client.get(
        f"/api/v1/conversations/{turn['conversation_id']}", headers=env.auth("member")
    )
    assert h.status_code == 200, h.text
    served = h.json()["messages"][1]
    assert served["hybrid_path"] == "rrf_only" and served["sources"]
    assert all(s["retrieved_score"] is None for s in served["sources"]), served["sources"]

    # The same row under the full path serves its scores.
    rewrite_answer(env, turn["message_id"], hybrid_path="full")
    h = env.client.get(
        f"/api/v1/conversations/{turn['conversation_id']}", headers=env.auth("member")
    )
    assert {s["retrieved_score"] for s in h.json()["messages"][1]["sources"]} == {87.0}


def test_admin_view_shows_sources_that_are_not_objects_as_marked_placeholders(
    env_both: ApiEnv,
) -> None:
    env = env_both
    turn = external_turn(env)
    good = stored_sources(env, turn["message_id"])[0]
    double_encoded = json.dumps(good)  # a writer that serialised the item twice
    rewrite_answer(env, turn["message_id"], sources=[None, double_encoded, good, 7, ["x"]])

    r = env.client.get(
        f"/api/v1/admin/conversations/{turn['conversation_id']}", headers=env.auth("admin")
    )
    assert r.status_code == 200, r.text
    sources = r.json()["messages"][1]["sources"]
    assert len(sources) == 5  # nothing hidden: each stored item has its row
    assert sources[2] == good  # what can be shown is shown as stored
    placeholders = [sources[i] for i in (0, 1, 3, 4)]
    assert all(p["unreadable"] is True and p["title"] for p in placeholders), placeholders
    assert [p["raw"] for p in placeholders] == ["null", json.dumps(double_encoded), "7", '["x"]']

    # The member's view of the same row serves the readable external source only.
    h = env.client.get(
        f"/api/v1/conversations/{turn['conversation_id']}", headers=env.auth("member")
    )
    assert h.status_code == 200, h.text
    assert [s["card_id"] for s in h.json()["messages"][1]["sources"]] == [good["card_id"]]

    # Analytics over the same rows still answer.
    for path in ("entry-performance", "retrieval-events"):
        a = env.client.get(f"/api/v1/admin/analytics/{path}", headers=env.auth("admin"))
        assert a.status_code == 200, (path, a.text)


def test_admin_view_of_a_sources_column_that_is_not_a_list(env_both: ApiEnv) -> None:
    env = env_both
    turn = external_turn(env)
    rewrite_answer(env, turn["message_id"], sources={"card_id": "x"}, timings=[1, 2])
    r = env.client.get(
        f"/api/v1/admin/conversations/{turn['conversation_id']}", headers=env.auth("admin")
    )
    assert r.status_code == 200, r.text
    message = r.json()["messages"][1]
    (placeholder,) = message["sources"]
    assert placeholder["unreadable"] is True and placeholder["raw"] == '{"card_id": "x"}'
    assert message["timings"]["unreadable"] is True and message["timings"]["raw"] == "[1, 2]"
    h = env.client.get(
        f"/api/v1/conversations/{turn['conversation_id']}", headers=env.auth("member")
    )
    assert h.status_code == 200 and h.json()["messages"][1]["sources"] == []
