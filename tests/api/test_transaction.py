"""A turn is stored in one transaction: when the save fails, nothing of it remains and the
member gets a clear 503 (or a stream ``error`` event), on SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import func, select, text

from citewall.storage.models import Conversation, Message, RetrievalEvent

from .conftest import INTERNAL_QUESTIONS, ApiEnv
from .test_flows import sse_events


def counts(env: ApiEnv) -> tuple[int, int]:
    with env.runtime.session_factory() as session:
        return (
            int(session.scalar(select(func.count()).select_from(Conversation)) or 0),
            int(session.scalar(select(func.count()).select_from(Message)) or 0),
        )


def test_failed_save_stores_nothing_and_answers_503(env_both: ApiEnv) -> None:
    env = env_both
    existing = env.chat("member", INTERNAL_QUESTIONS[0]).json()["conversation_id"]
    before = counts(env)
    engine = env.runtime.engine
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE retrieval_events RENAME TO retrieval_events_away"))
    try:
        for cid in (None, existing):
            r = env.chat("member", INTERNAL_QUESTIONS[1], cid)
            assert r.status_code == 503, r.text
            assert r.json() == {
                "detail": "the database is unavailable; nothing was saved, please retry"
            }
            s = env.client.post(
                "/api/v1/chat/stream",
                json={"message": INTERNAL_QUESTIONS[1], "conversation_id": cid},
                headers=env.auth("member"),
            )
            assert s.status_code == 200
            events = sse_events(s.text)
            assert events[0][0] == "meta" and events[-1][0] == "error"
            assert "final" not in [n for n, _ in events]
            assert "nothing was saved" in events[-1][1]["detail"]
        assert counts(env) == before, "a failed turn left rows behind"
    finally:
        with engine.begin() as conn:
            conn.execute(text("ALTER TABLE retrieval_events_away RENAME TO retrieval_events"))
    # The failed stream's announced conversation does not exist; the old one is intact.
    hist = env.client.get(f"/api/v1/conversations/{existing}", headers=env.auth("member"))
    assert len(hist.json()["messages"]) == 2
    # And the service recovers: the next turn is stored whole, with its events.
    ok = env.chat("member", INTERNAL_QUESTIONS[1], existing)
    assert ok.status_code == 200, ok.text
    with env.runtime.session_factory() as session:
        n_events = session.scalar(
            select(func.count())
            .select_from(RetrievalEvent)
            .where(RetrievalEvent.message_id == ok.json()["message_id"])
        )
    assert n_events and n_events > 0

    metrics = env.client.get("/metrics").text
    assert 'citewall_chat_errors_total{kind="StorageError"} 4.0' in metrics
