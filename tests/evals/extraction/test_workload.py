"""The budget replay, the honest members' plans and the simulated clock (pure; the replay is
checked against real server turns in ``test_benchmark``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.chat.corpus_protection import Budget
from citewall_evals.extraction.budget import ReplayTurn, replay_budget
from citewall_evals.extraction.clock import EPOCH, FakeClock
from citewall_evals.extraction.honest import (
    PER_DAY,
    WORK_END_H,
    WORK_START_H,
    HonestItem,
    honest_items,
    member_turns,
    plan_members,
)
from citewall_evals.extraction.workload import Captured, honest_outcomes

T0 = datetime(2030, 1, 1, tzinfo=UTC)

turns_strategy = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=400),
        st.frozensets(st.sampled_from("abcdefgh"), max_size=3),
    ),
    max_size=30,
)


@settings(max_examples=examples(60))
@given(raw=turns_strategy, cards=st.integers(min_value=1, max_value=6))
def test_replay_follows_the_budget_rule(raw: list[tuple[int, frozenset[str]]], cards: int) -> None:
    """A turn is restricted exactly when the distinct cards of the unrestricted turns inside the
    window before it reach the budget; a restricted turn adds nothing."""
    window = timedelta(hours=48)
    turns = sorted((ReplayTurn(T0 + timedelta(hours=h), c) for h, c in raw), key=lambda t: t.at)
    outcome = replay_budget(turns, Budget(cards, window))
    kept: list[ReplayTurn] = []
    for turn, restricted in zip(turns, outcome.restricted, strict=True):
        seen = {c for t in kept if t.at >= turn.at - window for c in t.cards}
        assert restricted == (len(seen) >= cards)
        if not restricted:
            kept.append(turn)
    assert outcome.peak <= cards - 1 + max((len(t.cards) for t in turns), default=0)
    unlimited = replay_budget(turns, Budget(10**9, window))
    assert not any(unlimited.restricted)
    assert unlimited.peak >= outcome.peak


def test_replay_lets_the_window_move_on() -> None:
    turns = [
        ReplayTurn(T0, frozenset({"a", "b"})),
        ReplayTurn(T0 + timedelta(hours=1), frozenset({"c"})),
        ReplayTurn(T0 + timedelta(hours=25), frozenset({"d"})),
    ]
    outcome = replay_budget(turns, Budget(2, timedelta(hours=24)))
    assert outcome.restricted == [False, True, False]
    assert outcome.first_restricted == 2
    assert outcome.peak == 2


ITEMS = [
    HonestItem("q1", ("refunds?",), frozenset({"refunds"})),
    HonestItem("q2", ("labels?",), frozenset({"labels"})),
    HonestItem("f1", ("returns?", "and then?"), frozenset({"returns"})),
    HonestItem("q3", ("claims?",), frozenset({"claims"})),
]


def test_members_ask_three_to_eight_items_a_day_in_working_hours() -> None:
    plans = plan_members(ITEMS, members=5, days=10, start=EPOCH, model="focused", seed=1)
    assert plans == plan_members(ITEMS, members=5, days=10, start=EPOCH, model="focused", seed=1)
    for plan in plans:
        assert 1 <= len(plan.areas) <= 2
        per_day: dict[int, int] = {}
        for at, _ in plan.asks:
            assert WORK_START_H <= at.hour < WORK_END_H
            day = (at.date() - EPOCH.date()).days
            per_day[day] = per_day.get(day, 0) + 1
        assert sorted(per_day) == list(range(10))
        assert all(PER_DAY[0] <= n <= PER_DAY[1] for n in per_day.values())
        assert [at for at, _ in plan.asks] == sorted(at for at, _ in plan.asks)


def test_focused_members_mostly_ask_about_their_own_areas() -> None:
    by_id = {i.id: i for i in ITEMS}
    for model, floor in (("focused", 0.75), ("uniform", 0.0)):
        plans = plan_members(ITEMS, members=10, days=30, start=EPOCH, model=model, seed=0)
        home = total = 0
        for plan in plans:
            for _, item_id in plan.asks:
                total += 1
                home += bool(by_id[item_id].areas & plan.areas)
        assert home / total >= floor
    uniform = plan_members(ITEMS, members=3, days=5, start=EPOCH, model="uniform")
    assert all(not p.areas for p in uniform)


def test_a_follow_up_item_is_two_turns_a_minute_apart() -> None:
    plans = plan_members(ITEMS, members=3, days=3, start=EPOCH, model="uniform")
    exposures = {
        "q1": [frozenset({"pb-a"})],
        "q2": [frozenset()],
        "f1": [frozenset(), frozenset({"pb-b"})],
        "q3": [frozenset({"pb-c"})],
    }
    for plan in plans:
        turns = member_turns(plan, exposures)
        follow = sum(item == "f1" for _, item in plan.asks)
        assert len(turns) == len(plan.asks) + follow
    captured = Captured(exposures=exposures)
    out = honest_outcomes(plans, captured, Budget(2, timedelta(days=7)))
    assert out["members"] == 3
    assert out["demand_peak_max"] >= out["peak_max"]
    assert all(m["peak_cards_in_window"] <= 3 for m in out["per_member"])


def test_honest_items_cover_the_labelled_questions_and_follow_ups() -> None:
    items = honest_items(["test"])
    assert len(items) > 150
    assert any(len(i.turns) == 2 for i in items)
    assert all(i.areas for i in items)


def test_fake_clock_only_moves_forward() -> None:
    clock = FakeClock(T0)
    clock.advance(600)
    assert clock() == T0 + timedelta(minutes=10)
    clock.advance(3000)
    assert clock.elapsed_s == 3600
    with pytest.raises(ValueError):
        clock.advance(-1)
    with pytest.raises(ValueError):
        FakeClock(datetime(2030, 1, 1))
