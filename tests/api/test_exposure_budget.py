"""Corpus protection over the real API: exposure rows with every turn, the verbatim cap, and the
exposure budget (restricted answers, the admin alert, the window on an injected clock)."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from citewall.api.app import create_app
from citewall.chat.corpus_protection import CapCounter, VerbatimCap
from citewall.retrieval.types import ContextChunk
from citewall.storage.models import Exposure, Message

from .conftest import INTERNAL_QUESTIONS, KB_FILE, ApiEnv, build_env, read_kb_facts

BUDGET = 2
CAP = VerbatimCap(max_sentences=1, span_words=10)


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 30, 9, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture(scope="module")
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="module")
def env(
    tmp_path_factory: pytest.TempPathFactory, embedder: Any, clock: FakeClock
) -> Iterator[ApiEnv]:
    base = build_env(
        tmp_path_factory.mktemp("exposure"),
        None,
        embedder,
        exposure_budget_cards=BUDGET,
        exposure_window_hours=24,
        max_internal_sentences=CAP.max_sentences,
        verbatim_span_words=CAP.span_words,
    )
    runtime = dataclasses.replace(base.runtime, clock=clock)
    app = create_app(runtime)
    env = dataclasses.replace(base, runtime=runtime, app=app, client=TestClient(app))
    yield env
    runtime.close()


def exposures(env: ApiEnv, who: str) -> list[Exposure]:
    with env.runtime.session_factory() as session:
        return list(
            session.scalars(
                select(Exposure).where(Exposure.user_id == env.user_ids[who]).order_by(Exposure.id)
            )
        )


def stored_answer(env: ApiEnv, message_id: str) -> Message:
    with env.runtime.session_factory() as session:
        message = session.get(Message, message_id)
        assert message is not None
        return message


def internal_chunks() -> list[ContextChunk]:
    facts = read_kb_facts(KB_FILE)
    cards = [json.loads(line) for line in KB_FILE.read_text(encoding="utf-8").splitlines() if line]
    return [
        ContextChunk(id=c["id"], text=c["body"], reply=c.get("reply"))
        for c in cards
        if c["id"] in facts.internal_ids
    ]


def test_small_talk_exposes_nothing(env: ApiEnv) -> None:
    body = env.chat("other", "hi").json()
    assert body["answer_status"] == "small_talk" and body["sources"] == []
    assert exposures(env, "other") == []


def test_budget_spent_restricts_answers_alerts_once_and_the_window_moves_on(
    env: ApiEnv, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    internal = internal_chunks()
    cards: set[str] = set()
    for question in INTERNAL_QUESTIONS:
        if len(cards) >= BUDGET:
            break
        body = env.chat("member", question).json()
        stored = stored_answer(env, body["message_id"])
        assert stored.restricted is None
        # The verbatim cap held: at most one sentence copies an internal card.
        counter = CapCounter(CAP, internal)
        for sentence in body["answer"].split(". "):
            counter.keep(sentence)
        assert counter.copied <= CAP.max_sentences
        cards = {e.card_id for e in exposures(env, "member")}
    assert len(cards) >= BUDGET, "the fixture's internal questions must reach the budget"
    assert all(e.cited or e.longest_span >= CAP.span_words for e in exposures(env, "member"))

    clock.now += timedelta(hours=1)
    before = len(exposures(env, "member"))
    with caplog.at_level(logging.WARNING, logger="citewall.exposure"):
        first = env.chat("member", INTERNAL_QUESTIONS[-1]).json()
        second = env.chat("member", INTERNAL_QUESTIONS[0]).json()
    # An ordinary answer for the member: no field or word says it was restricted.
    assert set(first) == set(second) and "restricted" not in first
    for body in (first, second):
        assert stored_answer(env, body["message_id"]).restricted == "exposure_budget"
    assert len(exposures(env, "member")) == before, "no internal card reached a restricted turn"
    alerts = [r for r in caplog.records if "exposure budget spent" in r.getMessage()]
    assert len(alerts) == 1, "the alert is raised once per window"
    metrics = env.client.get("/metrics").text
    assert "citewall_exposure_alerts_total 1.0" in metrics
    assert "citewall_answers_restricted_total 2.0" in metrics

    # Another member is not affected; after the window the member is unrestricted again.
    other = env.chat("other", INTERNAL_QUESTIONS[0]).json()
    assert stored_answer(env, other["message_id"]).restricted is None
    clock.now += timedelta(hours=25)
    again = env.chat("member", INTERNAL_QUESTIONS[0]).json()
    assert stored_answer(env, again["message_id"]).restricted is None


def test_exposure_rows_carry_the_injected_time(env: ApiEnv, clock: FakeClock) -> None:
    rows = exposures(env, "member")
    assert rows and max(r.created_at for r in rows) <= clock.now
    assert min(r.created_at for r in rows) == datetime(2026, 11, 30, 9, tzinfo=UTC)


def test_the_stream_applies_the_budget_too(env: ApiEnv, clock: FakeClock) -> None:
    clock.now += timedelta(hours=1)
    for question in INTERNAL_QUESTIONS:
        env.chat("other", question)
    with env.client.stream(
        "POST",
        "/api/v1/chat/stream",
        json={"message": INTERNAL_QUESTIONS[1]},
        headers=env.auth("other"),
    ) as r:
        text = "".join(r.iter_text())
    assert "event: final" in text
    final = json.loads(text.split("event: final\ndata: ", 1)[1].split("\n", 1)[0])
    assert stored_answer(env, final["message_id"]).restricted == "exposure_budget"
