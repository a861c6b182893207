"""Fault: PostgreSQL restarted during chat traffic (a PRIVATE cluster, never the shared one).

While it is down every request answers a clear 503 (never a 500); when it is back the same
citewall process serves again without a restart; no acknowledged turn is lost and nothing is
half-written. A stream whose exposure budget cannot be reserved stops with an ``error`` event
before any token: no internal prose goes out that could not be recorded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from citewall.api.answer_stream import answer_events
from citewall.api.metrics import ApiMetrics
from citewall.chat.turn import prepare_turn
from citewall.chat.turn_stream import TurnStream
from citewall.kb.audiences import Viewer
from citewall.storage import users
from citewall.storage.models import Exposure, ExposureReservation, Message
from citewall_evals.llm_server import Reply, ScriptedOpenAIServer

from .rig import QUESTIONS, Rig, build_rig, table_counts, turn_integrity_problems
from .services import PrivatePostgres, wait_until
from .sse import sse_events

DB_DOWN = "the database is unavailable; nothing was saved, please retry"

pytestmark = pytest.mark.slow


@pytest.fixture
def pg() -> Iterator[PrivatePostgres]:
    cluster = PrivatePostgres().init()
    cluster.start()
    yield cluster
    cluster.destroy()


@pytest.fixture
def rig(rig_dir: Path, embedder: Any, pg: PrivatePostgres) -> Iterator[Rig]:
    rig = build_rig(rig_dir, embedder, database_url=pg.url)
    yield rig
    rig.close()


class Traffic:
    """Chat turns in a loop on its own client until stopped; records every outcome."""

    def __init__(self, rig: Rig) -> None:
        self.client = TestClient(rig.app, raise_server_exceptions=False)
        self.headers = rig.auth("member")
        self.outcomes: list[tuple[float, int, Any]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        i = 0
        while not self._stop.is_set():
            r = self.client.post(
                "/api/v1/chat",
                json={"message": QUESTIONS[i % len(QUESTIONS)]},
                headers=self.headers,
            )
            self.outcomes.append((time.monotonic(), r.status_code, r.json()))
            i += 1

    def count(self, status: int) -> int:
        return sum(1 for _, s, _ in self.outcomes if s == status)

    def __enter__(self) -> Traffic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
        self.client.close()


def test_postgres_restart_during_traffic(rig: Rig, pg: PrivatePostgres) -> None:
    with Traffic(rig) as traffic:
        wait_until(lambda: traffic.count(200) >= 2, 60, "first answers")
        pg.stop("fast")  # disconnects every client; open transactions roll back
        down_at = time.monotonic()

        r = rig.chat(QUESTIONS[0])
        assert r.status_code == 503 and r.json() == {"detail": DB_DOWN}, r.text
        s = rig.stream(QUESTIONS[0])
        assert s.status_code == 503 and s.json() == {"detail": DB_DOWN}, s.text
        ready = rig.client.get("/readyz")
        # No token can be checked with the database down: the status alone, and the log.
        assert ready.status_code == 503 and ready.json() == {"status": "unavailable"}
        wait_until(
            lambda: sum(1 for t, st, _ in traffic.outcomes if t > down_at and st == 503) >= 2,
            30,
            "503s from the traffic while the database is down",
        )

        pg.start()
        up_at = time.monotonic()
        wait_until(
            lambda: sum(1 for t, st, _ in traffic.outcomes if t > up_at and st == 200) >= 2,
            60,
            "answers after the restart",
        )
    statuses = {status for _, status, _ in traffic.outcomes}
    allowed = {200, 503}
    assert statuses <= allowed, statuses
    assert traffic.count(500) <= 2, "more 500s than requests in flight at the stop"
    assert all(body == {"detail": DB_DOWN} for _, st, body in traffic.outcomes if st == 503)
    assert rig.client.get("/readyz").status_code == 200

    # Every acknowledged answer is stored, whole; nothing half-written from the aborted ones.
    acknowledged = {body["message_id"] for _, st, body in traffic.outcomes if st == 200}
    with rig.runtime.session_factory() as session:
        stored = set(session.scalars(select(Message.id).where(Message.role == "assistant")))
    assert acknowledged <= stored, acknowledged - stored
    assert turn_integrity_problems(rig.runtime.engine) == []


def test_database_lost_while_a_turn_is_generated_is_503(
    rig_dir: Path, embedder: Any, pg: PrivatePostgres
) -> None:
    """PostgreSQL stops while a turn is being generated: the save fails, nothing is stored,
    and the member gets the database 503 (deterministic: the LLM reply takes 2 s)."""
    with ScriptedOpenAIServer() as llm:
        # The first request stamps the token's last_used_at and commits; later ones (within a
        # minute) keep the auth session's read transaction open for the whole request.
        llm.enqueue("Void it from the order page [1].")
        llm.enqueue(Reply(text="Void it from the order page [1].", delay_s=2.0))
        rig = build_rig(
            rig_dir,
            embedder,
            database_url=pg.url,
            generator="openai",
            openai_base_url=llm.base_url,
            openai_retries=0,
            openai_timeout_s=20,
        )
        try:
            assert rig.chat(QUESTIONS[0]).status_code == 200
            result: dict[str, Any] = {}
            worker = threading.Thread(target=lambda: result.update(r=rig.chat(QUESTIONS[1])))
            worker.start()
            wait_until(lambda: len(llm.chat_requests) == 2, 30, "the turn reaching the LLM")
            pg.stop("fast")  # the request's auth connection is terminated now
            worker.join(timeout=60)
            pg.start()
            assert table_counts(rig.runtime.engine)["messages"] == 2  # the first turn only
            assert turn_integrity_problems(rig.runtime.engine) == []
            r = result["r"]
            assert r.status_code == 503, (r.status_code, r.text)
            assert r.json() == {"detail": DB_DOWN}
        finally:
            rig.close()


def test_database_down_before_the_first_token_sends_no_internal_prose(
    rig: Rig, pg: PrivatePostgres
) -> None:
    """The turn is planned, then PostgreSQL stops before the answer starts: the exposure budget
    cannot be reserved, so the stream ends with the database error and no token at all."""
    asked = rig.chat(QUESTIONS[1])
    assert asked.status_code == 200, asked.text
    with rig.runtime.session_factory() as session:
        user = users.authenticate(session, rig.tokens["member"])
        assert user is not None
        internal = session.scalars(
            select(Exposure.card_id).where(Exposure.message_id == asked.json()["message_id"])
        ).all()
    assert internal, "the question's answer must carry internal knowledge"
    before = table_counts(rig.runtime.engine)
    plan = prepare_turn(rig.runtime, user_id=user.id, question=QUESTIONS[1], conversation_id=None)
    turn = TurnStream(rig.runtime, user_id=user.id, viewer=Viewer(), plan=plan)
    pg.stop("fast")
    try:
        body = "".join(answer_events(turn, ApiMetrics(), threading.Event()))
    finally:
        pg.start()
    events = sse_events(body)
    assert [name for name, _ in events] == ["meta", "error"], body[:500]
    assert events[-1][1] == {"detail": DB_DOWN}
    assert table_counts(rig.runtime.engine) == before
    with rig.runtime.session_factory() as session:
        assert session.scalars(select(ExposureReservation)).all() == []
