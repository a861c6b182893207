"""Property: each conversation's outcome computed in SQL equals a plain-Python reading of the
rules (storage.resolution), and so do the report's counts per day and week and per top card
(storage.resolution_groups); both databases."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from builders import retrieval_record, saved_turn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.storage.models import Conversation, Feedback, Handoff, new_uuid
from citewall.storage.resolution import OUTCOMES, outcome_conversations, resolution_report
from citewall.storage.resolution_groups import card_resolution
from citewall.storage.schema import Database

from .conftest import ensure_user

BASE = datetime(2026, 1, 26, tzinfo=UTC)  # a Monday: the days span weeks
NOW = BASE + timedelta(days=12)
WINDOW = timedelta(hours=72)
SMALL_TALK = "Hello! Ask me about the help center."
STATUSES = ("answered", "not_found", "stopped", "other_language", "small_talk")
CARDS = (None, None, "card-a", "card-b")


@dataclass(frozen=True)
class Turn:
    status: str
    rating: str | None
    at: datetime
    #: The card retrieval ranked first for this answer (None: nothing retrieved).
    card: str | None = None


@dataclass(frozen=True)
class Conv:
    created_at: datetime
    turns: tuple[Turn, ...]
    handoff: bool


def outcome(conv: Conv, now: datetime, window: timedelta) -> str:
    """The rules as docs/handoff.md states them, first match wins."""
    if conv.handoff:
        return "escalated"
    if any(t.status == "not_found" or t.rating == "down" for t in conv.turns):
        return "unresolved"
    last_at = max((t.at for t in conv.turns), default=conv.created_at)
    if last_at > now - window:
        return "open"
    answered = any(t.status == "answered" for t in conv.turns)
    if not answered or conv.turns[-1].status == "stopped":
        return "abandoned"
    return "resolved"


def top_card(conv: Conv) -> str | None:
    """The card ranked first for the conversation's first answer the member was given (not a
    "not found", another language or small talk) that retrieved anything."""
    given = ("answered", "stopped")
    return next((t.card for t in conv.turns if t.card is not None and t.status in given), None)


def week_of(at: datetime) -> str:
    return (at.date() - timedelta(days=at.weekday())).isoformat()


turns = st.lists(
    st.tuples(
        st.sampled_from(STATUSES),
        st.sampled_from([None, None, "up", "down"]),
        st.integers(min_value=0, max_value=60),  # hours after the conversation began
        st.sampled_from(CARDS),
    ),
    max_size=3,
)
conversations = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=11 * 24),  # hours after BASE it began
        turns,
        st.booleans(),  # a handoff
    ),
    max_size=6,
)


def store(
    db: Database, raw: list[tuple[int, list[tuple[str, str | None, int, str | None]], bool]]
) -> dict[str, Conv]:
    stored: dict[str, Conv] = {}
    with db.sessions() as session:
        member = ensure_user(session)
        for start, raw_turns, handoff in raw:
            began = BASE + timedelta(hours=start)
            conversation = Conversation(
                id=new_uuid(), user_id=member, title="t", created_at=began, updated_at=began
            )
            session.add(conversation)
            session.commit()
            kept: list[Turn] = []
            by_time = sorted(raw_turns, key=lambda t: t[2])
            for i, (status, rating, after, card) in enumerate(by_time):
                at = began + timedelta(hours=after, seconds=i)
                _, answer = saved_turn(
                    session,
                    conversation_id=conversation.id,
                    answer_content=SMALL_TALK if status == "small_talk" else f"answer {i}",
                    answer_status="not_found" if status == "small_talk" else status,
                    # The top card ranked best, another card below it.
                    events=()
                    if card is None
                    else (retrieval_record(card, 2), retrieval_record("card-z", 3)),
                    now=at,
                )
                if rating is not None:
                    session.add(Feedback(message_id=answer.id, user_id=member, rating=rating))
                    session.commit()
                kept.append(Turn(status, rating, at, card))
            if handoff:
                session.add(
                    Handoff(
                        id=new_uuid(),
                        conversation_id=conversation.id,
                        user_id=member,
                        payload={},
                        next_attempt_at=began,
                        created_at=began,
                    )
                )
                session.commit()
            stored[conversation.id] = Conv(began, tuple(kept), handoff)
    return stored


@settings(
    max_examples=examples(15),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(raw=conversations)
def test_outcomes_match_the_rules(
    db: Database, clear: Callable[[Any], None], raw: list[Any]
) -> None:
    clear(db.engine)
    stored = store(db, raw)
    with db.sessions() as session:
        listed = outcome_conversations(
            session, now=NOW, window=WINDOW, small_talk_replies=[SMALL_TALK], limit=500
        )
        assert {c.conversation_id: (c.outcome, c.top_card_id) for c in listed} == {
            cid: (outcome(conv, NOW, WINDOW), top_card(conv)) for cid, conv in stored.items()
        }
        per_card: dict[str, Counter[str]] = {}
        for conv in stored.values():
            card = top_card(conv)
            if card is not None:
                per_card.setdefault(card, Counter())[outcome(conv, NOW, WINDOW)] += 1
        cards = card_resolution(session, now=NOW, window=WINDOW, small_talk_replies=[SMALL_TALK])
        assert [c.card_id for c in cards] == sorted(
            per_card, key=lambda c: (-sum(per_card[c].values()), c)
        )
        for row in cards:
            want = per_card[row.card_id]
            assert row.conversations == sum(want.values())
            assert row.outcomes.counts == {o: want[o] for o in OUTCOMES}
            decided = sum(want[o] for o in OUTCOMES if o != "open")
            assert row.outcomes.resolution_rate == (
                round(want["resolved"] / decided, 4) if decided else None
            )
            behind = outcome_conversations(
                session, now=NOW, window=WINDOW, top_card_id=row.card_id, limit=500
            )
            assert {c.conversation_id for c in behind} == {
                cid for cid, conv in stored.items() if top_card(conv) == row.card_id
            }
        for period, bucket in (("day", lambda at: at.date().isoformat()), ("week", week_of)):
            report = resolution_report(
                session, now=NOW, window=WINDOW, period=period, small_talk_replies=[SMALL_TALK]
            )
            expected: dict[str, Counter[str]] = {}
            for conv in stored.values():
                expected.setdefault(bucket(conv.created_at), Counter())[
                    outcome(conv, NOW, WINDOW)
                ] += 1
            assert [r.period_start for r in report.periods] == sorted(expected, reverse=True)
            for row in report.periods:
                want = expected[row.period_start]
                assert row.counts == {o: want[o] for o in OUTCOMES}
                decided = sum(want[o] for o in OUTCOMES if o != "open")
                assert row.decided == decided
                assert row.resolution_rate == (
                    round(want["resolved"] / decided, 4) if decided else None
                )


def test_resolved_waits_for_the_window(db: Database) -> None:
    """An answered conversation is open until its last message is WINDOW old, then resolved."""
    stored = store(db, [(0, [("answered", None, 1, None)], False)])
    (cid,) = stored
    last = BASE + timedelta(hours=1)
    with db.sessions() as session:
        for now, want in (
            (last + WINDOW - timedelta(seconds=1), "open"),
            (last + WINDOW, "resolved"),
        ):
            (row,) = outcome_conversations(session, now=now, window=WINDOW)
            assert (row.conversation_id, row.outcome) == (cid, want)
