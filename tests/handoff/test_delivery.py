"""Delivering the handoff outbox to a real HTTP receiver on loopback that checks signatures,
on SQLite and PostgreSQL: the receiver going down and coming back loses and repeats nothing,
5xx answers are retried and 4xx ones fail, retrying stops at the deadline, and two replicas on
one database deliver each handoff once."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
from builders import add_conversation, saved_turn
from handoff_receiver import Receiver
from sqlalchemy import select

from citewall.handoff.delivery import PassReport, Webhook, deliver_due, next_attempt
from citewall.handoff.payload import build_payload
from citewall.storage import conversations, handoffs
from citewall.storage.db import make_engine, make_session_factory
from citewall.storage.models import Handoff, HandoffAttempt, User, new_uuid
from citewall.storage.schema import Database
from citewall.storage.users import create_user

SECRET = "receiver-secret-0123456789"
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


class Clock:
    """The time every replica and the receiver agree on, moved by the test."""

    def __init__(self) -> None:
        self.now = T0
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += timedelta(seconds=seconds)

    def timestamp(self) -> float:
        return self().timestamp()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def receiver(clock: Clock) -> Iterator[Receiver]:
    r = Receiver(SECRET, clock=clock.timestamp).start()
    yield r
    r.stop()


def webhook_for(receiver: Receiver, retry_hours: float = 24.0) -> Webhook:
    return Webhook(
        url=receiver.url, secret=SECRET, timeout_s=2.0, retry_for=timedelta(hours=retry_hours)
    )


def make_handoff(db: Database, clock: Callable[[], datetime], question: str = "refunds?") -> str:
    """A member's conversation with one answered question, and a handoff of it; its id."""
    with db.sessions() as s:
        user, _ = create_user(s, f"m-{uuid.uuid4().hex[:8]}", "member")
        conversation = add_conversation(s, user.id)
        saved_turn(
            s,
            conversation_id=conversation.id,
            question=question,
            answer_content="Refunds take 5 days [1].",
            now=clock() - timedelta(minutes=1),
        )
        conversation = conversations.get_conversation(s, conversation.id, user.id)
        member = s.get(User, user.id)
        assert member is not None
        handoff_id = new_uuid()
        payload = build_payload(
            handoff_id=handoff_id,
            conversation=conversation,
            member=member,
            messages=conversations.list_messages(s, conversation.id),
            ratings={},
            message="please call",
            requested_at=clock(),
            include_internal=False,
            public_url="https://help.example",
        )
        row, created = handoffs.create_handoff(
            s,
            conversation,
            handoff_id=handoff_id,
            message="please call",
            payload=payload.model_dump(mode="json"),
            now=clock(),
        )
        assert created
        return row.id


def statuses(db: Database) -> dict[str, str]:
    with db.sessions() as s:
        return {h.id: h.status for h in s.scalars(select(Handoff))}


def attempts_of(db: Database, handoff_id: str) -> list[HandoffAttempt]:
    with db.sessions() as s:
        return list(
            s.scalars(
                select(HandoffAttempt)
                .where(HandoffAttempt.handoff_id == handoff_id)
                .order_by(HandoffAttempt.id)
            )
        )


def one_pass(db: Database, webhook: Webhook, clock: Clock, owner: str = "replica-a") -> PassReport:
    return deliver_due(db.sessions, webhook, owner=owner, clock=clock)


def test_a_handoff_reaches_the_receiver_signed_with_its_stored_payload(
    db: Database, receiver: Receiver, clock: Clock
) -> None:
    handoff_id = make_handoff(db, clock)
    report = one_pass(db, webhook_for(receiver), clock)
    assert (report.delivered, report.retrying, report.failed) == (1, 0, 0)
    assert receiver.accepted() == [handoff_id]
    body = receiver.received[0].body
    assert body["handoff_id"] == handoff_id and body["message"] == "please call"
    assert body["turns"][0]["answer"] == "Refunds take 5 days."  # prose, no markers
    assert body["admin_url"].startswith("https://help.example/admin/conversations/")
    assert statuses(db) == {handoff_id: "delivered"}
    (attempt,) = attempts_of(db, handoff_id)
    assert attempt.status_code == 200 and attempt.error is None
    # Delivered is done: later passes send nothing.
    clock.advance(3600)
    assert one_pass(db, webhook_for(receiver), clock).delivered == 0
    assert len(receiver.received) == 1


def test_the_receiver_down_and_back_loses_and_repeats_nothing(
    db: Database, receiver: Receiver, clock: Clock
) -> None:
    webhook = webhook_for(receiver)
    first = make_handoff(db, clock)
    assert one_pass(db, webhook, clock).delivered == 1
    receiver.stop()
    waiting = [make_handoff(db, clock, f"q{i}") for i in range(3)]
    report = one_pass(db, webhook, clock)
    assert (report.delivered, report.retrying) == (0, 3)
    # Not due again before the backoff's 30 seconds.
    clock.advance(10)
    assert one_pass(db, webhook, clock) == PassReport()
    receiver.start()  # the same port
    clock.advance(21)
    assert one_pass(db, webhook, clock).delivered == 3
    assert sorted(receiver.accepted()) == sorted([first, *waiting])
    assert len(receiver.received) == 4
    assert set(statuses(db).values()) == {"delivered"}
    for handoff_id in waiting:
        codes = [a.status_code for a in attempts_of(db, handoff_id)]
        assert codes == [None, 200]
        assert "ConnectError" in (attempts_of(db, handoff_id)[0].error or "")


def test_5xx_is_retried_and_4xx_fails_at_once(
    db: Database, receiver: Receiver, clock: Clock
) -> None:
    webhook = webhook_for(receiver)
    handoff_id = make_handoff(db, clock)
    receiver.status = 503
    assert one_pass(db, webhook, clock).retrying == 1
    receiver.status = 400
    clock.advance(31)
    assert one_pass(db, webhook, clock).failed == 1
    assert statuses(db) == {handoff_id: "failed"}
    assert [a.status_code for a in attempts_of(db, handoff_id)] == [503, 400]
    receiver.status = 200
    clock.advance(3600)
    assert one_pass(db, webhook, clock) == PassReport()
    rows, counts = handoffs.list_handoffs(db.sessions(), status="failed")
    assert [r.handoff.id for r in rows] == [handoff_id] and counts["failed"] == 1
    assert rows[0].handoff.last_error and "HTTP 400" in rows[0].handoff.last_error


def test_retrying_stops_at_the_deadline(db: Database, receiver: Receiver, clock: Clock) -> None:
    webhook = webhook_for(receiver, retry_hours=1)
    handoff_id = make_handoff(db, clock)
    receiver.stop()
    for _ in range(30):  # bounded: the backoff reaches the 1-hour deadline in ~8 attempts
        one_pass(db, webhook, clock)
        if statuses(db)[handoff_id] != "pending":
            break
        clock.advance(600)
    assert statuses(db) == {handoff_id: "failed"}
    tried = attempts_of(db, handoff_id)
    assert 3 <= len(tried) <= 10
    assert tried[-1].attempted_at <= T0 + timedelta(hours=1, minutes=10)


def test_a_lease_that_ran_out_passes_to_another_replica(
    db: Database, receiver: Receiver, clock: Clock
) -> None:
    webhook = webhook_for(receiver)
    handoff_id = make_handoff(db, clock)
    with db.sessions() as s:
        (held,) = handoffs.claim_due(s, owner="a", now=clock(), lease=webhook.lease)
        # While "a" holds it, "b" gets nothing.
        assert handoffs.claim_due(s, owner="b", now=clock(), lease=webhook.lease) == []
    clock.advance(webhook.lease.total_seconds() + 1)  # "a" died mid-attempt
    assert one_pass(db, webhook, clock, owner="b").delivered == 1
    with db.sessions() as s:
        late = handoffs.record_attempt(
            s,
            held,
            owner="a",
            now=clock(),
            outcome="retry",
            status_code=None,
            error="x",
            duration_ms=1.0,
        )
    assert late is False
    assert statuses(db) == {handoff_id: "delivered"}
    assert receiver.accepted() == [handoff_id]


def test_two_replicas_deliver_each_handoff_once(
    db: Database, receiver: Receiver, clock: Clock
) -> None:
    """Two replicas (their own engines and pools, one database) run passes at the same moment
    while the receiver goes down and comes back."""
    url = db.engine.url.render_as_string(hide_password=False)
    engines = [make_engine(url) for _ in range(2)]
    replicas = [make_session_factory(e) for e in engines]
    webhook = webhook_for(receiver)
    receiver.delay_s = 0.02

    def both_pass() -> list[PassReport]:
        reports: list[PassReport] = [PassReport(), PassReport()]
        start = threading.Barrier(2, timeout=10)

        def run(i: int) -> None:
            start.wait()
            reports[i] = deliver_due(replicas[i], webhook, owner=f"replica-{i}", clock=clock)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        return reports

    try:
        first = [make_handoff(db, clock, f"a{i}") for i in range(6)]
        assert sum(r.delivered for r in both_pass()) == 6
        receiver.stop()
        later = [make_handoff(db, clock, f"b{i}") for i in range(6)]
        reports = both_pass()
        assert sum(r.retrying for r in reports) == 6 and sum(r.lost for r in reports) == 0
        receiver.start()
        clock.advance(31)
        assert sum(r.delivered for r in both_pass()) == 6
    finally:
        for e in engines:
            e.dispose()
    counted = Counter(receiver.accepted())
    assert set(counted) == set(first + later)
    assert max(counted.values()) == 1
    assert set(statuses(db).values()) == {"delivered"}
    with db.sessions() as s:
        assert len(s.scalars(select(HandoffAttempt)).all()) == 6 + 6 + 6


def test_backoff_doubles_and_ends_on_the_deadline() -> None:
    made = T0
    day = timedelta(hours=24)
    assert next_attempt(made, 1, T0, day) == T0 + timedelta(seconds=30)
    assert next_attempt(made, 3, T0, day) == T0 + timedelta(minutes=2)
    near = T0 + day - timedelta(seconds=5)
    assert next_attempt(made, 9, near, day) == T0 + day
    assert next_attempt(made, 10, T0 + day, day) is None
