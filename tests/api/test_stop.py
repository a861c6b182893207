"""Stopping a streamed answer, in-process: the answer stream (``api.answer_stream``) is driven
the way ``EventStream`` drives it when a client goes away, on SQLite and PostgreSQL.

Closed at a ``yield`` after some prose, or told between deltas that the client is gone, it
stores the question and the prose shown so far as a ``stopped`` answer with its sources
reconciled to what that prose cites, its retrieval events and exposures, in one transaction.
Before any prose, nothing is stored. A real server and a client that hangs up is
``test_stop_server.py``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Generator
from typing import Any

from prometheus_client import generate_latest
from sqlalchemy import func, select, text

from citewall.api.answer_stream import answer_events
from citewall.api.metrics import ApiMetrics
from citewall.api.prose_stream import ProseStream
from citewall.boundary.prose import prose_only
from citewall.chat.turn import prepare_regeneration, prepare_turn
from citewall.chat.turn_stream import TurnStream
from citewall.citations.reconcile import reconcile
from citewall.kb.audiences import Viewer
from citewall.storage.conversations import list_events, list_messages
from citewall.storage.models import Conversation, Exposure, Message

from .conftest import INTERNAL_QUESTIONS, ApiEnv, KbFacts
from .leakcheck import sse_frames
from .test_flows import MARKER

#: An internal question whose answer keeps three sentences once staff-only ones are removed
#: (the staff-only check streams every answer a whole sentence at a time).
LONG_ANSWER = "How do refund exceptions work for annual plans, and when is a refund prorated?"


def stream(
    env: ApiEnv, question: str, conversation_id: str | None = None
) -> tuple[Generator[str, None, None], threading.Event, ApiMetrics, TurnStream]:
    plan = prepare_turn(
        env.runtime,
        user_id=env.user_ids["member"],
        question=question,
        conversation_id=conversation_id,
    )
    turn = TurnStream(env.runtime, user_id=env.user_ids["member"], viewer=Viewer(), plan=plan)
    gone, metrics = threading.Event(), ApiMetrics()
    return answer_events(turn, metrics, gone), gone, metrics, turn


def frames(chunks: list[str]) -> list[tuple[str, dict[str, Any]]]:
    return [(name, json.loads(data)) for name, data in sse_frames("".join(chunks))]


def count(env: ApiEnv, model: Any) -> int:
    with env.runtime.session_factory() as session:
        return int(session.scalar(select(func.count()).select_from(model)) or 0)


def test_closing_the_stream_mid_answer_stores_what_was_shown(
    env_both: ApiEnv, kb_facts: KbFacts
) -> None:
    env = env_both
    events, _, metrics, turn = stream(env, LONG_ANSWER)
    # Meta and two prose deltas (this answer streams a sentence at a time: the verbatim cap
    # on internal text lets a sentence through once it is whole).
    sent = [next(events) for _ in range(3)]
    events.close()  # what EventStream does once the client has gone
    got = frames(sent)
    assert [n for n, _ in got] == ["meta", "token", "token"]
    shown = "".join(d["delta"] for n, d in got if n == "token")
    assert turn.result is not None
    cid, answer_id = turn.result.conversation_id, turn.result.message_id
    assert got[0][1] == {"conversation_id": cid}

    with env.runtime.session_factory() as session:
        question, answer = list_messages(session, cid)
        events_of = list_events(session, answer_id)
        exposures = session.scalars(select(Exposure).where(Exposure.message_id == answer_id))
        exposed = {e.card_id for e in exposures}
    assert question.content == LONG_ANSWER
    assert answer.answer_status == "stopped" and str(answer.id) == answer_id
    # The stored content is what was shown (markers kept), and less than the whole answer.
    assert prose_only(answer.content) == shown
    whole = env.chat("other", LONG_ANSWER).json()["answer"]
    assert whole.startswith(shown) and len(shown) < len(whole)
    # Sources: the cards the shown prose cites, nothing more; events say the same.
    context = turn.result.answer.context.chunks
    cited = {c.card_id for c in reconcile(answer.content, context).citations}
    assert cited and {s["card_id"] for s in answer.sources} == cited
    assert {e.card_id for e in events_of if e.cited} == cited
    assert len(events_of) == len(context)
    assert exposed == cited & kb_facts.internal_ids
    assert answer.timings and "generate" in answer.timings
    assert 'citewall_answers_stopped_total{stored="true"} 1.0' in metrics_text(metrics)

    # Reload shows it, prose only and external only, marked stopped.
    reloaded = env.client.get(f"/api/v1/conversations/{cid}", headers=env.auth("member")).json()
    served = reloaded["messages"][1]
    assert served["answer_status"] == "stopped" and served["content"] == shown
    assert not MARKER.search(served["content"])
    assert {s["card_id"] for s in served["sources"]} == cited & kb_facts.external_ids

    # The stopped answer can be answered again; the new answer replaces it in history.
    plan = prepare_regeneration(env.runtime, user_id=env.user_ids["member"], conversation_id=cid)
    assert plan.regenerates == answer_id and plan.question == LONG_ANSWER


def test_a_client_gone_between_deltas_keeps_only_what_it_received(env_both: ApiEnv) -> None:
    env = env_both
    events, gone, _, turn = stream(env, INTERNAL_QUESTIONS[1])
    sent = [next(events) for _ in range(2)]  # meta and one prose delta
    gone.set()  # the server heard the disconnect while the model wrote the next delta
    assert list(events) == []  # the stream ends without sending it
    shown = "".join(d["delta"] for n, d in frames(sent) if n == "token")
    assert turn.result is not None and turn.result.answer.answer_status == "stopped"
    with env.runtime.session_factory() as session:
        stored = list_messages(session, turn.result.conversation_id)[1]
    assert prose_only(stored.content) == shown


def test_stopped_before_any_prose_stores_nothing(env_both: ApiEnv) -> None:
    env = env_both
    before = (count(env, Conversation), count(env, Message))
    # Closed right after ``meta``: the model never ran.
    events, _, metrics, turn = stream(env, INTERNAL_QUESTIONS[2])
    assert next(events).startswith("event: meta")
    events.close()
    assert turn.result is None
    # Gone before the first delta reached the member.
    events, gone, metrics, turn = stream(env, INTERNAL_QUESTIONS[2])
    next(events)
    gone.set()
    assert list(events) == [] and turn.result is None
    assert 'citewall_answers_stopped_total{stored="false"} 1.0' in metrics_text(metrics)
    # A follow-up in an existing conversation, stopped before prose: the conversation is as
    # it was.
    cid = env.chat("member", INTERNAL_QUESTIONS[0]).json()["conversation_id"]
    events, gone, _, turn = stream(env, INTERNAL_QUESTIONS[1], cid)
    next(events)
    gone.set()
    assert list(events) == []
    with env.runtime.session_factory() as session:
        assert len(list_messages(session, cid)) == 2
    assert (count(env, Conversation), count(env, Message)) == (before[0] + 1, before[1] + 2)


def test_closing_after_the_final_event_stores_the_answer_once(env_both: ApiEnv) -> None:
    env = env_both
    events, _, _, turn = stream(env, INTERNAL_QUESTIONS[0])
    sent = []
    for chunk in events:
        sent.append(chunk)
        if chunk.startswith("event: final"):
            break
    events.close()
    assert turn.result is not None and turn.result.answer.answer_status == "answered"
    with env.runtime.session_factory() as session:
        stored = list_messages(session, turn.result.conversation_id)
    assert [m.answer_status for m in stored] == [None, "answered"]


def test_a_stopped_answer_that_cannot_be_stored_is_logged_not_raised(
    env_both: ApiEnv, caplog: Any
) -> None:
    env = env_both
    before = count(env, Message)
    events, _, metrics, turn = stream(env, INTERNAL_QUESTIONS[0])
    next(events), next(events)
    with env.runtime.engine.begin() as conn:
        conn.execute(text("ALTER TABLE retrieval_events RENAME TO retrieval_events_away"))
    try:
        events.close()  # no exception escapes the stream
    finally:
        with env.runtime.engine.begin() as conn:
            conn.execute(text("ALTER TABLE retrieval_events_away RENAME TO retrieval_events"))
    assert turn.result is None and count(env, Message) == before
    assert "a stopped answer could not be stored" in caplog.text
    assert 'citewall_chat_errors_total{kind="StorageError"} 1.0' in metrics_text(metrics)


def test_settled_raw_text_never_ends_inside_a_marker() -> None:
    prose = ProseStream(prose_only)
    for delta in ("Refunds take", " 5 days [", "1", "]. A scanned", " label [2"):
        prose.feed(delta)
        assert not prose.settled.endswith(("[", "[1", "[2"))
    assert prose.settled == "Refunds take 5 days [1]. A scanned label"


def metrics_text(metrics: ApiMetrics) -> str:
    return generate_latest(metrics.registry).decode()
