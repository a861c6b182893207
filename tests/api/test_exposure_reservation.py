"""What a member was shown is recorded, whatever happens to the conversation, and the exposure
budget is reserved before the first token (``chat.budget``), in-process on SQLite and
PostgreSQL: the answer stream driven the way ``EventStream`` drives it, the conversation
deleted (hidden) by its member mid-answer through the API.

A real server with many deletes and parallel requests is
``tests/reliability/test_exposure_races.py``; the database down before the first token is
``tests/reliability/test_fault_postgres.py``.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Generator

import pytest
from sqlalchemy import func, select

from citewall.api.answer_stream import answer_events
from citewall.api.metrics import ApiMetrics
from citewall.boundary.prose import prose_only
from citewall.chat.budget import ExposureGate
from citewall.chat.turn import prepare_regeneration, prepare_turn
from citewall.chat.turn_stream import TurnStream
from citewall.kb.audiences import Viewer
from citewall.runtime import Runtime
from citewall.storage.conversations import list_messages
from citewall.storage.models import Exposure, ExposureReservation

from .conftest import INTERNAL_QUESTIONS, ApiEnv, KbFacts
from .test_stop import frames, stream


def delete(env: ApiEnv, conversation_id: str) -> None:
    r = env.client.delete(f"/api/v1/conversations/{conversation_id}", headers=env.auth("member"))
    assert r.status_code == 204, r.text


def reserved(env: ApiEnv) -> int:
    with env.runtime.session_factory() as session:
        return int(
            session.scalar(
                select(func.count())
                .select_from(ExposureReservation)
                .where(ExposureReservation.user_id == env.user_ids["member"])
            )
            or 0
        )


def exposed(env: ApiEnv, message_id: str) -> set[str]:
    with env.runtime.session_factory() as session:
        return set(
            session.scalars(select(Exposure.card_id).where(Exposure.message_id == message_id))
        )


def shown(sent: list[str]) -> str:
    return "".join(d["delta"] for n, d in frames(sent) if n == "token")


def assert_recorded(env: ApiEnv, turn: TurnStream, kb_facts: KbFacts, read: str) -> None:
    """The turn is stored in its (hidden) conversation with what the member read and the
    exposure rows of the internal cards it cites; its reservation is settled."""
    assert turn.result is not None, "the member read prose that was not recorded"
    cid, message_id = turn.result.conversation_id, turn.result.message_id
    with env.runtime.session_factory() as session:
        answer = list_messages(session, cid)[-1]
    assert str(answer.id) == message_id and prose_only(answer.content).startswith(read.rstrip())
    cited = {s["card_id"] for s in answer.sources} & kb_facts.internal_ids
    assert cited and cited <= exposed(env, message_id)
    assert reserved(env) == 0
    hidden = env.client.get(f"/api/v1/conversations/{cid}", headers=env.auth("member"))
    assert hidden.status_code == 404, "the conversation stays hidden from its member"


def opened(env: ApiEnv) -> str:
    """A conversation of the member's opened with small talk (no exposure)."""
    return str(env.chat("member", "hi").json()["conversation_id"])


def test_the_budget_is_reserved_before_the_first_token_and_settled_by_the_save(
    env_both: ApiEnv, kb_facts: KbFacts
) -> None:
    env = env_both
    events, _, _, turn = stream(env, INTERNAL_QUESTIONS[0], opened(env))
    assert next(events).startswith("event: meta")
    assert reserved(env) == 0
    assert next(events).startswith("event: token")
    assert reserved(env) > 0, "internal prose went out before its exposure was accounted"
    rest = list(events)
    assert rest[-1].startswith("event: final") and turn.result is not None
    assert reserved(env) == 0 and exposed(env, turn.result.message_id)


def regenerated(env: ApiEnv, question: str) -> tuple[Generator[str, None, None], TurnStream]:
    """A regenerate of the member's answer to ``question``, streamed."""
    cid = env.chat("member", question).json()["conversation_id"]
    plan = prepare_regeneration(env.runtime, user_id=env.user_ids["member"], conversation_id=cid)
    turn = TurnStream(env.runtime, user_id=env.user_ids["member"], viewer=Viewer(), plan=plan)
    return answer_events(turn, ApiMetrics(), threading.Event()), turn


def asked(env: ApiEnv, question: str) -> tuple[Generator[str, None, None], TurnStream]:
    """A new question in a conversation the member opened with small talk, streamed."""
    events, _, _, turn = stream(env, question, opened(env))
    return events, turn


@pytest.mark.parametrize("start", [asked, regenerated], ids=["asked", "regenerated"])
def test_the_whole_answer_is_stored_when_the_conversation_is_deleted_mid_answer(
    env_both: ApiEnv,
    kb_facts: KbFacts,
    start: Callable[..., tuple[Generator[str, None, None], TurnStream]],
) -> None:
    env = env_both
    events, turn = start(env, INTERNAL_QUESTIONS[1])
    sent = [next(events), next(events)]
    delete(env, turn.plan.conversation_id)
    sent += list(events)
    assert [n for n, _ in frames(sent)][-1] == "final", sent[-1]
    assert turn.result is not None and turn.result.answer.answer_status == "answered"
    assert_recorded(env, turn, kb_facts, shown(sent))


def test_stopping_after_the_conversation_was_deleted_stores_what_was_shown(
    env_both: ApiEnv, kb_facts: KbFacts
) -> None:
    env = env_both
    cid = opened(env)
    events, _, _, turn = stream(env, INTERNAL_QUESTIONS[0], cid)
    sent = [next(events) for _ in range(3)]
    delete(env, cid)
    events.close()  # the client closed the stream
    assert turn.result is not None and turn.result.answer.answer_status == "stopped"
    assert_recorded(env, turn, kb_facts, shown(sent))


def test_a_client_gone_after_the_delete_keeps_what_it_received(
    env_both: ApiEnv, kb_facts: KbFacts
) -> None:
    env = env_both
    cid = opened(env)
    events, gone, _, turn = stream(env, INTERNAL_QUESTIONS[1], cid)
    sent = [next(events), next(events)]
    delete(env, cid)
    gone.set()  # the server heard the disconnect while the model wrote the next delta
    assert list(events) == []
    assert_recorded(env, turn, kb_facts, shown(sent))


def test_stopped_before_any_prose_releases_the_reservation(
    env_both: ApiEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = env_both
    held: list[int] = []
    release = ExposureGate.release

    def observed_release(gate: ExposureGate) -> None:
        held.append(reserved(env))
        release(gate)

    monkeypatch.setattr(ExposureGate, "release", observed_release)
    events, gone, _, turn = stream(env, INTERNAL_QUESTIONS[0], opened(env))
    next(events)
    gone.set()  # gone before the first delta reached the member
    assert list(events) == [] and turn.result is None
    assert held and held[0] > 0, "the first delta was reserved before the stop was seen"
    assert reserved(env) == 0, "nothing was shown, so nothing stays held"


def budget_off_stream(
    runtime: Runtime, env: ApiEnv, cid: str
) -> tuple[Generator[str, None, None], TurnStream]:
    plan = prepare_turn(
        runtime, user_id=env.user_ids["member"], question=INTERNAL_QUESTIONS[0], conversation_id=cid
    )
    turn = TurnStream(runtime, user_id=env.user_ids["member"], viewer=Viewer(), plan=plan)
    return answer_events(turn, ApiMetrics(), threading.Event()), turn


def test_with_the_budget_off_a_deleted_conversation_still_takes_the_turn(
    env_both: ApiEnv, kb_facts: KbFacts
) -> None:
    env = env_both
    settings = env.runtime.settings.model_copy(update={"exposure_budget_cards": 0})
    runtime = dataclasses.replace(env.runtime, settings=settings)
    cid = opened(env)
    events, turn = budget_off_stream(runtime, env, cid)
    sent = [next(events), next(events)]
    assert reserved(env) == 0  # off: nothing is reserved
    delete(env, cid)
    sent += list(events)
    assert_recorded(env, turn, kb_facts, shown(sent))
