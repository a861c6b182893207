"""Property: the SQL rollup equals a pure-Python computation over random turns, some rated
thumbs up or down by their member, some followed by a request for a person (both databases)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.storage.analytics import entry_performance
from citewall.storage.models import Feedback, Handoff, Message, new_uuid
from citewall.storage.schema import Database

from .conftest import ensure_user

POOL = ["k0", "k1", "k2", "k3", "k4"]
BASE = datetime(2026, 1, 26, tzinfo=UTC)  # spans several weeks and a month boundary

Turn = tuple[datetime, list[str], list[str], str | None, bool]


def period_start(at: datetime, period: str) -> str | None:
    day: date = at.date()
    if period == "all":
        return None
    if period == "week":
        day -= timedelta(days=day.weekday())
    elif period == "month":
        day = day.replace(day=1)
    return day.isoformat()


def expected(turns: list[Turn], period: str) -> list[dict[str, Any]]:
    """The rollup's definition, in plain Python."""
    acc: dict[tuple[str, str | None], dict[str, Any]] = defaultdict(
        lambda: {"ret": 0, "rank_sum": 0, "cited": 0, "last": None, "up": 0, "down": 0, "ho": 0}
    )
    for at, retrieved, cited, rating, handoff in turns:
        p = period_start(at, period)
        for rank, card in enumerate(retrieved, start=1):
            acc[(card, p)]["ret"] += 1
            acc[(card, p)]["rank_sum"] += rank
        for card in set(cited):  # one assistant message cites a card at most once
            slot = acc[(card, p)]
            slot["cited"] += 1
            slot["last"] = at if slot["last"] is None else max(slot["last"], at)
            if rating is not None:
                slot[rating] += 1
            if handoff:
                slot["ho"] += 1
    out = [
        {
            "card_id": card,
            "period_start": p,
            "times_retrieved": v["ret"],
            "times_cited": v["cited"],
            "cite_rate": round(v["cited"] / v["ret"], 4) if v["ret"] else None,
            "mean_rank": round(v["rank_sum"] / v["ret"], 4) if v["ret"] else None,
            "last_cited": v["last"].isoformat() if v["last"] else None,
            "is_external": False,
            "helpful": v["up"],
            "unhelpful": v["down"],
            "helpful_rate": round(v["up"] / (v["up"] + v["down"]), 4)
            if v["up"] + v["down"]
            else None,
            "handoffs": v["ho"],
            "audiences": [],  # the rig's cards are for every member
        }
        for (card, p), v in acc.items()
    ]
    out.sort(key=lambda r: (-r["times_cited"], -r["times_retrieved"], r["card_id"]))
    out.sort(key=lambda r: r["period_start"] or "", reverse=True)  # stable: newest period first
    return out


turn_strategy = st.tuples(
    st.integers(min_value=0, max_value=45),  # day offset
    st.integers(min_value=0, max_value=23),  # hour
    st.lists(st.sampled_from(POOL), unique=True, max_size=4),  # retrieved, in rank order
    st.lists(st.sampled_from(POOL), max_size=3),  # cited (duplicates allowed in sources)
    st.sampled_from([None, "up", "down"]),  # the member's rating of the answer
    st.booleans(),  # the member asked for a person after it
)


@settings(
    max_examples=examples(12),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(raw_turns=st.lists(turn_strategy, max_size=6))
def test_rollup_matches_python(
    db: Database,
    record: Callable[..., str],
    clear: Callable[[Any], None],
    raw_turns: list[tuple[int, int, list[str], list[str], str | None, bool]],
) -> None:
    clear(db.engine)
    turns: list[Turn] = []
    with db.sessions() as session:
        for i, (days, hour, retrieved, cited, rating, handoff) in enumerate(raw_turns):
            at = BASE + timedelta(days=days, hours=hour, seconds=i)  # distinct times
            answer_id = record(session, at, [(card, False) for card in retrieved], cited)
            if rating is not None:
                member = ensure_user(session)  # the owner of the turns ``record`` saves
                session.add(Feedback(message_id=answer_id, user_id=member, rating=rating))
                session.commit()
            if handoff:
                answer = session.get(Message, answer_id)
                assert answer is not None
                later = at + timedelta(minutes=1)
                session.add(
                    Handoff(
                        id=new_uuid(),
                        conversation_id=answer.conversation_id,
                        user_id=ensure_user(session),
                        payload={},
                        next_attempt_at=later,
                        created_at=later,
                    )
                )
                session.commit()
            turns.append((at, retrieved, cited, rating, handoff))
        for period in ("all", "day", "week", "month"):
            assert entry_performance(session, period=period) == expected(turns, period)
