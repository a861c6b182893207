"""`citewall serve` runs retention on a schedule while it serves (the app's lifespan): with
``CITEWALL_RETENTION_DAYS`` set, a conversation past the window loses its words; while another
replica holds the lease, a run does nothing."""

from __future__ import annotations

import time
from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy import select, update

from citewall.api.app import create_app
from citewall.api.retention_schedule import LEASE_TTL, run_once
from citewall.storage import leases
from citewall.storage.models import Conversation, Message
from citewall.storage.retention import LEASE
from citewall.storage.types import utcnow

from .conftest import EXTERNAL_QUESTION, ApiEnv, client_with


def _old_conversation(env: ApiEnv) -> str:
    r = env.chat("member", EXTERNAL_QUESTION)
    assert r.status_code == 200, r.text
    conversation = str(r.json()["conversation_id"])
    with env.runtime.session_factory() as session:
        session.execute(
            update(Conversation)
            .where(Conversation.id == conversation)
            .values(updated_at=utcnow() - timedelta(days=40))
        )
        session.commit()
    return conversation


def _contents(env: ApiEnv, conversation: str) -> list[str]:
    with env.runtime.session_factory() as session:
        return list(
            session.scalars(select(Message.content).where(Message.conversation_id == conversation))
        )


def test_the_schedule_runs_retention_while_the_app_serves(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    conversation = _old_conversation(env)
    runtime, _ = client_with(env, retention_days=30, retention_interval_s=3600)
    app = create_app(runtime)
    with TestClient(app):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_contents(env, conversation)):
            time.sleep(0.2)
        assert app.state.retention is not None
    assert _contents(env, conversation) == ["", ""]
    r = env.client.get(
        "/api/v1/admin/audit", params={"action": "retention"}, headers=env.auth("admin")
    )
    line = r.json()["entries"][0]
    assert line["via"] == "system" and line["detail"]["conversations"] >= 1


def test_a_run_waits_for_the_replica_holding_the_lease(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    conversation = _old_conversation(env)
    settings = env.runtime.settings.model_copy(update={"retention_days": 30})
    sessions = env.runtime.session_factory
    with sessions() as session:
        assert leases.acquire(session, LEASE, "the-other-replica", now=utcnow(), ttl=LEASE_TTL)
    try:
        assert run_once(sessions, settings, holder="this-one") is None
        assert any(_contents(env, conversation))
    finally:
        with sessions() as session:
            leases.release(session, LEASE, "the-other-replica")
    report = run_once(sessions, settings, holder="this-one")
    assert report is not None and report.conversations >= 1
    assert _contents(env, conversation) == ["", ""]
