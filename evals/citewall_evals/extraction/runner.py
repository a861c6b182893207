"""Drive the real app as an attacker would: a member token on ``POST /api/v1/chat``.

Each question goes to the FastAPI app in-process (``TestClient``) over HTTP semantics: status
codes, ``Retry-After`` and all. Time is simulated (``clock.FakeClock``, the app's
``Runtime.clock``): the runner advances it by the pace's gap after each answer and by
``Retry-After`` after a 429, so an attack at the rate limit and one at a question every ten
minutes both take only the answering time of wall time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastapi.testclient import TestClient

from citewall_evals.extraction.attackers import Attacker, Exchange
from citewall_evals.extraction.clock import FakeClock

#: 429s in a row for one question before the run gives up (the limit must let it through
#: once its window passes, so this only guards against a broken limiter).
MAX_RETRIES = 50


class AttackError(RuntimeError):
    """The app kept refusing one question (``MAX_RETRIES`` 429s in a row)."""


@dataclass(frozen=True, slots=True)
class Pace:
    """How fast a member sends questions: ``gap_s`` of simulated time after each answer."""

    name: str
    gap_s: float


#: A script at the rate limit: the next question as soon as an answer arrives (answering
#: takes no simulated time), a 429 waited out (``Retry-After``).
FAST = Pace("fast", 0.0)
#: A patient member: one question every ten minutes.
PATIENT = Pace("patient", 600.0)


@dataclass(frozen=True, slots=True)
class AttackTurn:
    """One question and what the member got back, with the ids to read the stored turn."""

    index: int  # 1-based: the n-th question of the run
    query: str
    answer: str  # the member-visible prose ("" when the request failed)
    status: int
    answer_status: str
    conversation_id: str
    message_id: str
    at: datetime  # simulated time the answered request was sent
    rate_limited: int  # 429s waited out before it was answered


def run_attack(
    client: TestClient,
    token: str,
    attacker: Attacker,
    clock: FakeClock,
    pace: Pace,
    queries: int,
    *,
    turns_per_conversation: int = 1,
    on_turn: Callable[[AttackTurn], None] | None = None,
) -> list[AttackTurn]:
    """Ask ``queries`` questions chosen by ``attacker``, each in a new conversation (or up to
    ``turns_per_conversation`` turns in one, a new one when it is full). A failed request
    (other than 429) is kept with an empty answer, and the attacker sees it that way."""
    headers = {"Authorization": f"Bearer {token}"}
    history: list[Exchange] = []
    turns: list[AttackTurn] = []
    conversation: str | None = None
    in_conversation = 0
    for index in range(1, queries + 1):
        query = attacker.next_query(history)
        if in_conversation >= turns_per_conversation:
            conversation, in_conversation = None, 0
        body: dict[str, str] = {"message": query}
        if conversation is not None:
            body["conversation_id"] = conversation
        reply = _send(client, headers, body, clock)
        if reply.status == 409 and conversation is not None:  # full: start a new one
            body.pop("conversation_id")
            waited = reply.rate_limited
            reply = _send(client, headers, body, clock)
            reply = dataclasses.replace(reply, rate_limited=reply.rate_limited + waited)
            in_conversation = 0
        data = reply.body
        turn = AttackTurn(
            index=index,
            query=query,
            answer=str(data.get("answer", "")),
            status=reply.status,
            answer_status=str(data.get("answer_status", "")),
            conversation_id=str(data.get("conversation_id", "")),
            message_id=str(data.get("message_id", "")),
            at=reply.sent_at,
            rate_limited=reply.rate_limited,
        )
        if turn.status == 200:
            conversation = turn.conversation_id
            in_conversation += 1
        history.append(Exchange(query, turn.answer))
        turns.append(turn)
        if on_turn is not None:
            on_turn(turn)
        clock.advance(pace.gap_s)
    return turns


@dataclass(frozen=True, slots=True)
class _Reply:
    status: int
    body: dict[str, Any]  # the JSON of a 200, else empty
    sent_at: datetime  # when the answered request was sent
    rate_limited: int  # 429s waited out first


def _send(
    client: TestClient, headers: dict[str, str], body: dict[str, str], clock: FakeClock
) -> _Reply:
    """POST ``body``, waiting out each 429 on the clock."""
    for waited in range(MAX_RETRIES + 1):
        sent_at = clock()
        resp = client.post("/api/v1/chat", json=body, headers=headers)
        if resp.status_code != 429:
            data = resp.json() if resp.status_code == 200 else {}
            return _Reply(resp.status_code, data, sent_at, waited)
        clock.advance(float(resp.headers.get("Retry-After", "1")))
    raise AttackError(f"{MAX_RETRIES} rate-limit refusals in a row for {body['message']!r}")
