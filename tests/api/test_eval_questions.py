"""Admins save test questions from production ("Save as test question") and export them as the
questions file of `citewall eval kb`; the export loads with that command's own loader."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from citewall.generation.protocols import Turn
from citewall.storage.models import Message
from citewall_evals.own_kb.questions import parse_questions

FOLLOW_UP = "And how long do refunds take?"


def first_answer(env: Any, question: str, conversation_id: str | None = None) -> dict[str, Any]:
    reply = env.chat("member", question, conversation_id)
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def stored_sources(env: Any, conversation_id: str, message_id: str) -> list[str]:
    view = env.client.get(
        f"/api/v1/admin/conversations/{conversation_id}", headers=env.auth("admin")
    )
    message = next(m for m in view.json()["messages"] if m["id"] == message_id)
    return [s["card_id"] for s in message["sources"]]


def test_saved_questions_export_as_a_questions_file_that_loads(env_both: Any) -> None:
    env = env_both
    admin = env.auth("admin")
    first = first_answer(env, "How do I create my first shipping label?")
    follow = first_answer(env, FOLLOW_UP, first["conversation_id"])
    card = stored_sources(env, first["conversation_id"], first["message_id"])[0]

    saved = env.client.post(
        "/api/v1/admin/eval-questions",
        json={"message_id": first["message_id"], "expected": [card], "facts": ["Click Buy label"]},
        headers=admin,
    )
    assert saved.status_code == 201, saved.text
    assert saved.json()["question"] == "How do I create my first shipping label?"
    assert saved.json()["conversation"] == []
    gap = env.client.post(
        "/api/v1/admin/eval-questions",
        json={"message_id": follow["message_id"], "unanswerable": True, "source": "gap"},
        headers=admin,
    )
    assert gap.status_code == 201, gap.text
    # Saving the same answer again replaces its question (one per answer).
    again = env.client.post(
        "/api/v1/admin/eval-questions",
        json={"message_id": follow["message_id"], "unanswerable": True, "source": "feedback"},
        headers=admin,
    )
    assert again.json()["id"] == gap.json()["id"]

    export = env.client.get("/api/v1/admin/eval-questions.jsonl", headers=admin)
    assert export.status_code == 200
    # Saving copies a member's words and the file holds them: a line per save, and the export.
    lines = env.client.get("/api/v1/admin/audit", headers=admin).json()["entries"]
    actions = [(e["action"], e["target"]) for e in lines]
    assert actions.count(("test_questions.change", f"conversation:{first['conversation_id']}")) == 3
    assert ("export", "test_questions") in actions
    assert export.headers["content-type"].startswith("application/jsonl")
    loaded = {q.question: q for q in parse_questions(export.content, "export")}
    label = loaded["How do I create my first shipping label?"]
    assert label.expected == (card,) and label.facts == ("Click Buy label",)
    follow_up = loaded[FOLLOW_UP]
    assert follow_up.unanswerable and follow_up.expected == ()
    assert follow_up.conversation[0] == Turn("user", "How do I create my first shipping label?")
    assert [t.role for t in follow_up.conversation] == ["user", "assistant"]

    listed = env.client.get("/api/v1/admin/eval-questions", headers=admin).json()
    for row in listed:
        assert (
            env.client.delete(
                f"/api/v1/admin/eval-questions/{row['id']}", headers=admin
            ).status_code
            == 204
        )
    assert env.client.get("/api/v1/admin/eval-questions.jsonl", headers=admin).content == b""


def test_bad_requests_are_refused_with_a_reason(env_both: Any) -> None:
    env = env_both
    admin = env.auth("admin")
    answer = first_answer(env, "How do I create my first shipping label?")
    cases = [
        ({"message_id": answer["message_id"]}, 422, "pick the card"),
        ({"message_id": answer["message_id"], "expected": ["nope"]}, 422, "card 'nope' is not in"),
        (
            {"message_id": answer["message_id"], "expected": ["x"], "unanswerable": True},
            422,
            "pick the card",
        ),
        ({"message_id": "f" * 36, "unanswerable": True}, 404, "not found"),
        (
            {"message_id": answer["message_id"], "unanswerable": True, "facts": ["x"]},
            422,
            "no facts",
        ),
    ]
    for body, status, detail in cases:
        reply = env.client.post("/api/v1/admin/eval-questions", json=body, headers=admin)
        assert reply.status_code == status, (body, reply.text)
        assert detail in str(reply.json()["detail"])
    member = env.client.post(
        "/api/v1/admin/eval-questions",
        json={"message_id": answer["message_id"], "unanswerable": True},
        headers=env.auth("member"),
    )
    assert member.status_code == 403
    assert (
        env.client.get("/api/v1/admin/eval-questions.jsonl", headers=env.auth("member")).status_code
        == 403
    )


def test_a_question_removed_under_retention_cannot_be_saved(env_both: Any) -> None:
    """Saving it would export an empty question the questions-file loader refuses."""
    env = env_both
    answer = first_answer(env, "How do I print a packing slip?")
    with env.runtime.session_factory() as session:
        question = session.scalars(
            select(Message).where(
                Message.conversation_id == answer["conversation_id"], Message.role == "user"
            )
        ).one()
        question.content = ""  # what retention leaves of the member's words
        session.commit()
    reply = env.client.post(
        "/api/v1/admin/eval-questions",
        json={"message_id": answer["message_id"], "unanswerable": True},
        headers=env.auth("admin"),
    )
    assert reply.status_code == 422 and "removed" in reply.json()["detail"]
    listed = env.client.get("/api/v1/admin/eval-questions", headers=env.auth("admin")).json()
    assert answer["message_id"] not in str(listed)
