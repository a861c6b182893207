"""Property: the SQL exposure report equals a pure-Python computation over random turns (both
databases)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from builders import add_exposed_turn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.kb.card import Card
from citewall.storage.cards import upsert_cards
from citewall.storage.exposure.report import exposure_ranking, member_exposure
from citewall.storage.schema import Database
from citewall.storage.users import create_user

USERS = ("ann", "ben", "cy")
CARDS = ("c1", "c2", "c3", "c4", "c5")
KEYS = ("s1", "s2", "s3")
BASE = datetime(2026, 5, 30, 20, tzinfo=UTC)  # turns span day and month boundaries

#: (user, at, {card: (keys, span)}, restricted)
Turn = tuple[str, datetime, dict[str, tuple[list[str], int]], bool]


def expected_ranking(turns: list[Turn]) -> list[tuple[Any, ...]]:
    """The ranking's definition, in plain Python."""
    acc: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"turns": 0, "cards": set(), "pairs": set(), "span": 0, "times": [], "r": []}
    )
    for user, at, cards, restricted in turns:
        a = acc[user]
        if restricted:
            a["r"].append(at)
        if cards:
            a["turns"] += 1
            a["times"].append(at)
        for card, (keys, span) in cards.items():
            a["cards"].add(card)
            a["pairs"].update((card, k) for k in keys)
            a["span"] = max(a["span"], span)
    rows = [
        (
            user,
            len(a["cards"]),
            round(len(a["cards"]) / len(CARDS), 4),
            len(a["pairs"]),
            a["turns"],
            a["span"],
            min(a["times"], default=None),
            max(a["times"], default=None),
            len(a["r"]),
            min(a["r"], default=None),
        )
        for user, a in acc.items()
        if a["turns"] or a["r"]
    ]
    # Ties: the oldest user first (USERS are created in order).
    return sorted(rows, key=lambda r: (-r[1], -r[3], -r[4], -r[8], USERS.index(r[0])))


def expected_days(turns: list[Turn], user: str) -> list[tuple[str, int, int, int, int]]:
    acc: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"cards": set(), "pairs": set(), "turns": 0, "r": 0}
    )
    for who, at, cards, restricted in turns:
        if who != user or not (cards or restricted):
            continue
        d = acc[at.date().isoformat()]
        d["r"] += restricted
        d["turns"] += bool(cards)
        for card, (keys, _) in cards.items():
            d["cards"].add(card)
            d["pairs"].update((card, k) for k in keys)
    return [
        (day, len(d["cards"]), len(d["pairs"]), d["turns"], d["r"])
        for day, d in sorted(acc.items())
    ]


turn_strategy = st.tuples(
    st.sampled_from(USERS),
    st.integers(min_value=0, max_value=72),  # hours after BASE
    st.dictionaries(
        st.sampled_from(CARDS),
        st.tuples(st.lists(st.sampled_from(KEYS), unique=True, max_size=3), st.integers(0, 30)),
        max_size=3,
    ),
    st.booleans(),
)


@settings(
    max_examples=examples(12),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(raw=st.lists(turn_strategy, max_size=8))
def test_report_matches_python(
    db: Database,
    clear: Callable[[Any], None],
    raw: list[tuple[str, int, dict[str, tuple[list[str], int]], bool]],
) -> None:
    clear(db.engine)
    turns: list[Turn] = []
    with db.sessions() as session:
        upsert_cards(session, [Card(id=c, title=c, body=c) for c in CARDS], 1)
        ids = {u: create_user(session, u, "member")[0].id for u in USERS}
        for i, (user, hours, cards, restricted) in enumerate(raw):
            # A restricted answer drew on no internal card: the budget kept them out.
            cards = {} if restricted else cards
            at = BASE + timedelta(hours=hours, seconds=i)
            add_exposed_turn(
                session, ids[user], at, cards, restricted="exposure_budget" if restricted else None
            )
            turns.append((user, at, cards, restricted))
        got = exposure_ranking(session).rows
        assert [
            (
                r.name,
                r.cards,
                r.corpus_share,
                r.verbatim_sentences,
                r.turns,
                r.longest_span,
                r.first_exposed,
                r.last_exposed,
                r.restricted_turns,
                r.first_restricted,
            )
            for r in got
        ] == expected_ranking(turns)
        for user in USERS:
            report = member_exposure(session, ids[user], limit=100)
            days = [
                (d.day, d.cards, d.verbatim_sentences, d.turns, d.restricted_turns)
                for d in report.days
            ]
            assert days == expected_days(turns, user)
            mine = sorted((t for t in turns if t[0] == user and (t[2] or t[3])), key=lambda t: t[1])
            assert [t.created_at for t in report.turns] == [t[1] for t in reversed(mine)]
