"""Erasure on request through the admin API: the member's name, email, tokens, sessions and
words go; their analytics rows stay under a fresh pseudonymous user; a receipt is returned and
stored; the audit log has the line. While it runs, another member chatting on a second app
over the same database loses nothing. A host-site member who signs in again is a new user."""

from __future__ import annotations

import threading
import uuid
from dataclasses import replace
from datetime import datetime

from fastapi.testclient import TestClient
from jwks_host import SigningKey, claims, sign
from sqlalchemy import func, select

from citewall.api.app import create_app
from citewall.storage import db, users
from citewall.storage.erasure import PSEUDONYM_ISSUER
from citewall.storage.models import (
    ApiToken,
    Conversation,
    Erasure,
    Exposure,
    Feedback,
    Message,
    RetrievalEvent,
    User,
)

from .conftest import (
    ADMIN_DOMAIN,
    EXTERNAL_QUESTION,
    INTERNAL_QUESTIONS,
    MEMBER_AUDIENCE,
    MEMBER_ISSUER,
    PROXY_AUDIENCE,
    PROXY_HEADER,
    PROXY_ISSUER,
    ApiEnv,
)

CSRF = {"X-Citewall-CSRF": "1"}


def _member(env: ApiEnv) -> tuple[int, dict[str, str]]:
    with env.runtime.session_factory() as session:
        user, token = users.create_user(session, f"erasable-{uuid.uuid4().hex[:6]}")
    return user.id, {"Authorization": f"Bearer {token}"}


def _chat(
    client: TestClient, headers: dict[str, str], message: str, conversation: str | None = None
) -> str:
    r = client.post(
        "/api/v1/chat", json={"message": message, "conversation_id": conversation}, headers=headers
    )
    assert r.status_code == 200, r.text
    return str(r.json()["conversation_id"])


def _count(env: ApiEnv, query: object) -> int:
    with env.runtime.session_factory() as session:
        return int(session.scalar(query) or 0)  # type: ignore[call-overload]


def _spans(env: ApiEnv, conversation: str) -> list[str]:
    """The ``span`` of every stored source of the conversation's answers."""
    with env.runtime.session_factory() as session:
        stored = session.scalars(
            select(Message.sources).where(
                Message.conversation_id == conversation, Message.role == "assistant"
            )
        ).all()
    return [s["span"] for sources in stored for s in sources if s.get("span") is not None]


def test_an_erasure_removes_the_person_and_keeps_the_figures(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    user_id, headers = _member(env)
    conversation = _chat(env.client, headers, INTERNAL_QUESTIONS[0])
    _chat(env.client, headers, INTERNAL_QUESTIONS[1], conversation)
    with env.runtime.session_factory() as session:
        answer = session.scalars(
            select(Message.id).where(
                Message.conversation_id == conversation, Message.role == "assistant"
            )
        ).first()
    rated = env.client.put(
        f"/api/v1/messages/{answer}/feedback",
        json={"rating": "down", "comment": "my order 1234 is still missing"},
        headers=headers,
    )
    assert rated.status_code in (200, 201), rated.text
    # An admin saved the member's question as a test question: a copy of their words.
    saved = env.client.post(
        "/api/v1/admin/eval-questions",
        json={"message_id": answer, "unanswerable": True},
        headers=env.auth("admin"),
    )
    assert saved.status_code == 201, saved.text
    events = _count(env, select(func.count()).where(RetrievalEvent.conversation_id == conversation))
    spans = _spans(env, conversation)
    assert spans, "the answers cite their sources with the sentence that cites them"
    exposures = _count(env, select(func.count()).where(Exposure.user_id == user_id))

    r = env.client.post(f"/api/v1/admin/users/{user_id}/erasure", headers=env.auth("admin"))
    assert r.status_code == 200, r.text
    receipt = r.json()
    assert receipt["status"] == "done" and receipt["user_id"] == user_id
    assert receipt["requested_by"].startswith("admin-") and receipt["completed_at"]
    # Recorded first, then carried out: the times are when each happened.
    assert datetime.fromisoformat(receipt["completed_at"]) > datetime.fromisoformat(
        receipt["requested_at"]
    )
    assert receipt["removed"]["users.name"] == 1 and receipt["removed"]["api_tokens"] == 1
    assert receipt["removed"]["messages.content"] == 4
    assert receipt["removed"]["feedback.comment"] == 1
    assert receipt["kept"] == {
        "conversations": 1,
        "feedback": 1,
        "exposures": exposures,
        "handoffs": 0,
    }

    assert env.client.get("/api/v1/me", headers=headers).status_code == 401
    with env.runtime.session_factory() as session:
        assert session.get(User, user_id) is None
        assert session.scalar(select(ApiToken).where(ApiToken.user_id == user_id)) is None
        row = session.get(Conversation, conversation)
        assert row is not None and row.title == "(removed)"
        pseudonym = session.get(User, row.user_id)
        assert pseudonym is not None and pseudonym.issuer == PSEUDONYM_ISSUER
        assert pseudonym.email is None and pseudonym.disabled_at is not None
        contents = session.scalars(
            select(Message.content).where(Message.conversation_id == conversation)
        ).all()
        assert contents == [""] * 4
    # The answer sentence each source kept is the answer's words: gone, the sources stay.
    assert _spans(env, conversation) == []
    assert receipt["removed"]["messages.sources.span"] == len(spans)
    # The saved test question went with the conversation's words.
    assert receipt["removed"]["eval_questions.question"] == 1
    questions = env.client.get("/api/v1/admin/eval-questions", headers=env.auth("admin"))
    assert questions.json() == []
    with env.runtime.session_factory() as session:
        feedback = session.scalars(select(Feedback).where(Feedback.user_id == pseudonym.id)).all()
        assert [(f.rating, f.comment) for f in feedback] == [("down", None)]
        kept_events = session.scalars(
            select(RetrievalEvent).where(RetrievalEvent.conversation_id == conversation)
        ).all()
        assert len(kept_events) == events and all(e.query is None for e in kept_events)
        kept_exposures = session.scalar(
            select(func.count()).where(Exposure.user_id == pseudonym.id)
        )
        assert kept_exposures == exposures
        stored = session.scalar(select(Erasure).where(Erasure.id == receipt["id"]))
        assert stored is not None and stored.status == "done"
    receipts = env.client.get("/api/v1/admin/erasures", headers=env.auth("admin")).json()
    assert receipts[0] == receipt
    line = env.client.get(
        "/api/v1/admin/audit", params={"action": "erasure"}, headers=env.auth("admin")
    ).json()["entries"][0]
    assert line["target"] == f"user:{user_id}" and line["actor_user_id"] == env.user_ids["admin"]
    # Erased already (the pseudonym), unknown, or yourself: refused, nothing is done.
    assert (
        env.client.post(
            f"/api/v1/admin/users/{pseudonym.id}/erasure", headers=env.auth("admin")
        ).status_code
        == 422
    )
    assert (
        env.client.post("/api/v1/admin/users/999999/erasure", headers=env.auth("admin")).status_code
        == 404
    )
    assert (
        env.client.post(
            f"/api/v1/admin/users/{env.user_ids['admin']}/erasure", headers=env.auth("admin")
        ).status_code
        == 422
    )
    assert (
        env.client.post(
            f"/api/v1/admin/users/{env.user_ids['other']}/erasure", headers=env.auth("member")
        ).status_code
        == 403
    )


def test_an_erasure_while_another_member_chats_on_a_second_app(
    env_sqlite: ApiEnv, tmp_path: object
) -> None:
    """Two apps with their own connection pools on one database: one erases a member with
    several conversations, the other keeps serving another member's turns meanwhile."""
    env = env_sqlite
    erased_id, erased = _member(env)
    for question in (*INTERNAL_QUESTIONS, EXTERNAL_QUESTION):
        _chat(env.client, erased, question)
    _, chatting = _member(env)
    engine = db.make_engine(env.runtime.settings.sqlalchemy_url)
    second = replace(env.runtime, engine=engine, session_factory=db.make_session_factory(engine))
    replica = TestClient(create_app(second))
    answered: list[str] = []
    stop = threading.Event()
    failures: list[str] = []

    def keep_chatting() -> None:
        conversation = None
        while not stop.is_set() or len(answered) < 3:
            r = replica.post(
                "/api/v1/chat",
                json={"message": EXTERNAL_QUESTION, "conversation_id": conversation},
                headers=chatting,
            )
            if r.status_code != 200:
                failures.append(f"{r.status_code} {r.text}")
                return
            conversation = r.json()["conversation_id"]
            answered.append(str(conversation))

    thread = threading.Thread(target=keep_chatting)
    thread.start()
    try:
        r = env.client.post(f"/api/v1/admin/users/{erased_id}/erasure", headers=env.auth("admin"))
    finally:
        stop.set()
        thread.join(timeout=120)
    engine.dispose()
    assert r.status_code == 200, r.text
    assert not failures, failures
    (conversation,) = set(answered)
    with env.runtime.session_factory() as session:
        messages = session.scalars(
            select(Message).where(Message.conversation_id == conversation).order_by(Message.seq)
        ).all()
        assert len(messages) == 2 * len(answered)
        assert all(m.content and m.content_removed_at is None for m in messages)
        assert [m.content for m in messages if m.role == "user"] == [EXTERNAL_QUESTION] * len(
            answered
        )
        queries = session.scalars(
            select(RetrievalEvent.query).where(RetrievalEvent.conversation_id == conversation)
        ).all()
        assert queries and all(queries)


def test_a_host_site_member_signing_in_again_is_a_new_user(
    env_sign_in: ApiEnv, signing_keys: dict[str, SigningKey]
) -> None:
    env = env_sign_in
    subject = f"leaving-{env.backend}"

    def sign_in() -> dict[str, object]:
        token = sign(
            signing_keys["rsa"],
            claims(MEMBER_ISSUER, MEMBER_AUDIENCE, subject, email="leaving@host.test"),
        )
        r = env.client.post("/api/v1/auth/session", json={"token": token})
        assert r.status_code == 201, r.text
        return dict(r.json())

    first = sign_in()
    session_headers = {"Authorization": f"Bearer {first['token']}"}
    _chat(env.client, session_headers, EXTERNAL_QUESTION)
    with env.runtime.session_factory() as session:
        (user,) = session.scalars(select(User).where(User.subject == subject)).all()
    admin = {
        PROXY_HEADER: sign(
            signing_keys["proxy"],
            claims(PROXY_ISSUER, PROXY_AUDIENCE, "dpo", email=f"dpo@{ADMIN_DOMAIN}"),
        ),
        **CSRF,
    }
    r = env.client.post(f"/api/v1/admin/users/{user.id}/erasure", headers=admin)
    assert r.status_code == 200, r.text
    assert r.json()["removed"]["sessions"] == 1 and r.json()["removed"]["users.email"] == 1
    assert env.client.get("/api/v1/me", headers=session_headers).status_code == 401
    again = sign_in()
    with env.runtime.session_factory() as session:
        (new,) = session.scalars(select(User).where(User.subject == subject)).all()
    assert new.id != user.id
    mine = env.client.get(
        "/api/v1/conversations", headers={"Authorization": f"Bearer {again['token']}"}
    )
    assert mine.status_code == 200 and mine.json() == []
    line = env.client.get(
        "/api/v1/admin/audit", params={"action": "erasure", "limit": 1}, headers=admin
    ).json()["entries"][0]
    assert line["via"] == "admin_proxy" and line["target"] == f"user:{user.id}"
