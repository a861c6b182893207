"""Handoff to a person through the API: a member asks on their own conversation (stored
before delivery, 202), another member's or an unknown one is a 404, an oversized message a
422, no webhook a 409 and ``/me`` says so; the payload keeps internal sources out unless told;
the server's own delivery loop (the app's lifespan) delivers to a loopback receiver; admins
list the outbox; the demo hands over to its own helpdesk. SQLite and PostgreSQL."""

from __future__ import annotations

import time
import uuid
from dataclasses import replace
from datetime import timedelta
from typing import Any

from fastapi.testclient import TestClient
from handoff_receiver import Receiver
from pydantic import SecretStr
from sqlalchemy import select

from citewall.api.app import create_app
from citewall.cli.demo import (
    HANDOFF_MESSAGE,
    HANDOFF_QUESTION,
    demo_tokens,
    seed_support_history,
    with_demo_helpdesk,
)
from citewall.cli.demo_helpdesk import DemoHelpdesk
from citewall.handoff.delivery import Webhook, deliver_due
from citewall.storage.models import Handoff
from citewall.storage.resolution import outcome_conversations
from citewall.storage.users import get_user

from .conftest import EXTERNAL_QUESTION, INTERNAL_QUESTIONS, ApiEnv, KbFacts, client_with

SECRET = "handoff-secret-0123456789"


def with_webhook(env: ApiEnv, receiver: Receiver, **overrides: Any) -> tuple[Any, TestClient]:
    return client_with(
        env,
        handoff_webhook_url=receiver.url,
        handoff_webhook_secret=SecretStr(SECRET),
        handoff_poll_s=0.05,
        public_url="https://help.example",
        **overrides,
    )


def ask_for_person(
    client: TestClient, env: ApiEnv, conversation_id: str, body: Any = None, who: str = "member"
) -> Any:
    kwargs: dict[str, Any] = {"headers": env.auth(who)}
    if body is not None:
        kwargs["json"] = body
    return client.post(f"/api/v1/conversations/{conversation_id}/handoff", **kwargs)


def stored(env: ApiEnv, conversation_id: str) -> list[Handoff]:
    with env.runtime.session_factory() as s:
        return list(s.scalars(select(Handoff).where(Handoff.conversation_id == conversation_id)))


def test_without_a_webhook_the_handoff_is_off(env_both: ApiEnv) -> None:
    env = env_both
    conversation = env.chat("member", EXTERNAL_QUESTION).json()["conversation_id"]
    assert env.client.get("/api/v1/me", headers=env.auth("member")).json()["handoff"] is False
    response = ask_for_person(env.client, env, conversation)
    assert response.status_code == 409 and "not configured" in response.json()["detail"]
    assert stored(env, conversation) == []


def test_a_member_asks_for_a_person_on_their_own_conversation(env_both: ApiEnv) -> None:
    env = env_both
    receiver = Receiver(SECRET)  # not started: nothing is delivered in this test
    _, client = with_webhook(env, receiver)
    assert client.get("/api/v1/me", headers=env.auth("member")).json()["handoff"] is True
    chat = env.chat("member", EXTERNAL_QUESTION).json()
    conversation = chat["conversation_id"]
    env.client.put(
        f"/api/v1/messages/{chat['message_id']}/feedback",
        json={"rating": "down", "comment": "not my case"},
        headers=env.auth("member"),
    )
    response = ask_for_person(client, env, conversation, {"message": "  please call me  "})
    assert response.status_code == 202, response.text
    receipt = response.json()
    assert set(receipt) == {"id", "conversation_id", "created_at"}
    (row,) = stored(env, conversation)
    assert row.id == receipt["id"] and row.status == "pending" and row.attempts == 0
    assert row.message == "please call me"
    payload = row.payload
    assert payload["member"]["id"] == env.user_ids["member"]
    (turn,) = payload["turns"]
    assert turn["question"] == EXTERNAL_QUESTION and turn["status"] == "answered"
    assert turn["rating"] == "down" and turn["rating_comment"] == "not my case"
    assert "[1]" not in turn["answer"] and turn["answer"] == chat["answer"]
    assert payload["admin_url"] == f"https://help.example/admin/conversations/{conversation}"
    # Asking again with nothing new is the same request.
    again = ask_for_person(client, env, conversation)
    assert again.status_code == 202 and again.json()["id"] == receipt["id"]
    assert len(stored(env, conversation)) == 1
    same_note = ask_for_person(client, env, conversation, {"message": "please call me"})
    assert same_note.json()["id"] == receipt["id"]
    assert len(stored(env, conversation)) == 1
    # A new note with nothing else new is a new request: the note is not dropped.
    noted = ask_for_person(client, env, conversation, {"message": "my order is 12345"})
    assert noted.status_code == 202 and noted.json()["id"] != receipt["id"]
    assert [h.message for h in stored(env, conversation)].count("my order is 12345") == 1
    # A new question, then asking again: another handoff.
    env.chat("member", "And for a gift card?", conversation)
    second = ask_for_person(client, env, conversation).json()
    assert second["id"] not in (receipt["id"], noted.json()["id"])
    # The member's export holds their requests for a person with their note.
    export = client.get("/api/v1/me/export", headers=env.auth("member")).json()
    assert [(h["id"], h["conversation_id"], h["message"]) for h in export["handoffs"]] == [
        (receipt["id"], conversation, "please call me"),
        (noted.json()["id"], conversation, "my order is 12345"),
        (second["id"], conversation, None),
    ]


def test_other_members_unknown_ids_and_bad_messages_are_refused(env_both: ApiEnv) -> None:
    env = env_both
    _, client = with_webhook(env, Receiver(SECRET))
    conversation = env.chat("member", EXTERNAL_QUESTION).json()["conversation_id"]
    for cid in (str(uuid.uuid4()), "not-a-uuid"):
        r = ask_for_person(client, env, cid)
        assert r.status_code == 404 and "not found" in r.json()["detail"]
    r = ask_for_person(client, env, conversation, who="other")
    assert r.status_code == 404
    r = ask_for_person(client, env, conversation, {"message": "x" * 2001})
    assert r.status_code == 422 and "at most 2000 characters" in r.json()["detail"]
    r = ask_for_person(client, env, conversation, {"message": "hi", "priority": "high"})
    assert r.status_code == 422
    r = ask_for_person(client, env, conversation, {"message": 5})
    assert r.status_code == 422
    assert stored(env, conversation) == []


def test_internal_sources_stay_out_of_the_payload_unless_included(
    env_both: ApiEnv, kb_facts: KbFacts
) -> None:
    env = env_both
    canaries = set(kb_facts.internal_ids) | set(kb_facts.title_canaries)
    for include in (False, True):
        _, client = with_webhook(env, Receiver(SECRET), handoff_include_internal=include)
        chat = env.chat("member", INTERNAL_QUESTIONS[0]).json()
        ask_for_person(client, env, chat["conversation_id"])
        (row,) = stored(env, chat["conversation_id"])
        text = str(row.payload)
        sources = [s for t in row.payload["turns"] for s in t["sources"]]
        assert row.payload["internal_sources_included"] is include
        if include:
            assert any(s["internal"] for s in sources)
        else:
            assert not any(s["internal"] for s in sources)
            assert not any(c in text for c in canaries), "an internal card reached the payload"


def test_the_server_delivers_and_admins_see_the_outbox(env_both: ApiEnv) -> None:
    env = env_both
    receiver = Receiver(SECRET).start()
    try:
        runtime, _ = with_webhook(env, receiver)
        conversation = env.chat("member", EXTERNAL_QUESTION).json()["conversation_id"]
        # The app's lifespan runs the delivery loop, as `citewall serve` does.
        with TestClient(create_app(runtime)) as client:
            receipt = ask_for_person(client, env, conversation).json()
            for _ in range(200):  # bounded: up to ~10 s
                if receipt["id"] in receiver.accepted():
                    break
                time.sleep(0.05)
            # The earlier tests' handoffs, still pending, go out too: each once.
            accepted = receiver.accepted()
            assert receipt["id"] in accepted and len(accepted) == len(set(accepted))
            for _ in range(100):
                page = client.get("/api/v1/admin/handoffs", headers=env.auth("admin")).json()
                if page["pending"] == 0:
                    break
                time.sleep(0.05)
            mine = [h for h in page["handoffs"] if h["id"] == receipt["id"]]
            assert mine and mine[0]["status"] == "delivered"
            assert [a["status_code"] for a in mine[0]["attempt_log"]] == [200]
            assert page["delivered"] >= 1
            delivered = client.get(
                "/api/v1/admin/handoffs",
                params={"status": "delivered"},
                headers=env.auth("admin"),
            ).json()
            assert all(h["status"] == "delivered" for h in delivered["handoffs"])
            assert (
                client.get("/api/v1/admin/handoffs", headers=env.auth("member")).status_code == 403
            )
            assert (
                client.get(
                    "/api/v1/admin/handoffs", params={"status": "lost"}, headers=env.auth("admin")
                ).status_code
                == 422
            )
    finally:
        receiver.stop()


def test_the_demo_hands_over_to_its_own_helpdesk(env_both: ApiEnv) -> None:
    """`citewall demo`'s wiring: its loopback helpdesk becomes the webhook (an operator's own
    URL wins), the demo member's seeded request is made once, and it is delivered signed."""
    env = env_both
    helpdesk = DemoHelpdesk().start()
    try:
        settings = with_demo_helpdesk(env.runtime.settings, helpdesk, "http://127.0.0.1:8000")
        assert settings.handoff_webhook_url == helpdesk.url
        assert settings.public_url == "http://127.0.0.1:8000"
        chosen = env.runtime.settings.model_copy(
            update={"handoff_webhook_url": "https://desk.example/hook"}
        )
        assert (
            with_demo_helpdesk(chosen, helpdesk, "x").handoff_webhook_url
            == chosen.handoff_webhook_url
        )
        runtime = replace(env.runtime, settings=settings)
        demo_tokens(runtime.session_factory)
        assert seed_support_history(runtime) is True
        assert seed_support_history(runtime) is False
        with runtime.session_factory() as session:
            member = get_user(session, "demo-member")
            seeded_outcomes = {
                c.title: c.outcome
                for c in outcome_conversations(
                    session,
                    now=runtime.clock(),
                    window=timedelta(hours=settings.resolution_window_hours),
                )
                if c.user_id == member.id
            }
        # One conversation answered past its window (resolved), one handed over (escalated).
        assert sorted(seeded_outcomes.values()) == ["escalated", "resolved"]
        webhook = Webhook.from_settings(settings)
        assert webhook is not None
        for _ in range(5):  # bounded: earlier tests' handoffs go out in the same passes
            deliver_due(runtime.session_factory, webhook, owner="demo", clock=runtime.clock)
        seeded = [h for h in helpdesk.received if h["message"] == HANDOFF_MESSAGE]
        assert len(seeded) == 1 and seeded[0]["member"]["name"] == "demo-member"
        assert seeded[0]["turns"][0]["question"] == HANDOFF_QUESTION
        assert seeded[0]["admin_url"].startswith("http://127.0.0.1:8000/admin/conversations/")
    finally:
        helpdesk.stop()
