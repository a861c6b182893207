"""The exposure report on hand-built exposure rows, on both databases: ranking, windows, the
per-day drill-down, the turns, and rows that are not what the writer stores."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from builders import add_exposed_turn
from sqlalchemy import text, update
from sqlalchemy.orm import Session

from citewall.errors import NotFoundError, UserError
from citewall.kb.card import Card
from citewall.storage.cards import upsert_cards
from citewall.storage.db import make_engine, make_session_factory
from citewall.storage.exposure.report import (
    ExposureRanking,
    MemberExposure,
    exposure_ranking,
    member_exposure,
)
from citewall.storage.models import Exposure, Message
from citewall.storage.schema import migrate
from citewall.storage.users import create_user

T1 = datetime(2026, 3, 1, 23, 59, 59, tzinfo=UTC)  # the last second of a day
T2 = datetime(2026, 3, 2, 0, 0, 0, tzinfo=UTC)  # the next day
T3 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
BUDGET = "exposure_budget"


def build_fixture(session: Session) -> dict[str, Any]:
    """Four internal cards and one external; alice and bob exposed, carol only restricted,
    dave never. Returns user ids and alice's answer ids."""
    upsert_cards(
        session,
        [
            *(Card(id=f"p{i}", title=f"Playbook {i}", body=f"body {i}") for i in range(1, 5)),
            Card(id="e1", title="Help", body="help", url="https://help.example/e1"),
        ],
        1,
    )
    ids = {n: create_user(session, n, "member")[0].id for n in ("alice", "bob", "carol", "dave")}
    alice = ids["alice"]
    a1 = add_exposed_turn(
        session, alice, T1, {"p1": (["k1", "k2"], 12), "p2": ([], 3)}, question="first?"
    )
    conv = session.get_one(Message, a1).conversation_id
    a2 = add_exposed_turn(
        session, alice, T2, {"p1": (["k2", "k3"], 20)}, question="second?", conversation_id=conv
    )
    a3 = add_exposed_turn(
        session, alice, T3, {}, question="third?", restricted=BUDGET, conversation_id=conv
    )
    add_exposed_turn(session, ids["bob"], T2, {"p1": (["k1"], 5), "p3": (["k1"], 11)})
    add_exposed_turn(session, ids["carol"], T3, {}, restricted=BUDGET)
    return {**ids, "a1": a1, "a2": a2, "a3": a3, "conversation": conv}


def summary(r: MemberExposure) -> tuple[Any, ...]:
    return (
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


def ranked(result: ExposureRanking) -> list[tuple[Any, ...]]:
    return [summary(r) for r in result.rows]


EXPECTED_ALL = [
    # name, cards, share, verbatim, turns, span, first, last, restricted, first restricted
    ("alice", 2, 0.5, 3, 2, 20, T1, T2, 1, T3),
    ("bob", 2, 0.5, 2, 1, 11, T2, T2, 0, None),
    ("carol", 0, 0.0, 0, 0, 0, None, None, 1, T3),
]


def test_members_ranked_by_cards_then_verbatim_sentences(session: Session) -> None:
    build_fixture(session)
    result = exposure_ranking(session)
    assert result.internal_cards == 4
    assert result.members == 3
    assert ranked(result) == EXPECTED_ALL
    assert [r.role for r in result.rows] == ["member"] * 3


def test_window_is_since_inclusive_until_exclusive(session: Session) -> None:
    build_fixture(session)
    result = exposure_ranking(session, since=T2, until=T3)
    assert ranked(result) == [
        ("bob", 2, 0.5, 2, 1, 11, T2, T2, 0, None),
        ("alice", 1, 0.25, 2, 1, 20, T2, T2, 0, None),
    ]
    assert result.members == 2
    naive = exposure_ranking(session, since=T2.replace(tzinfo=None), until=T3.replace(tzinfo=None))
    assert naive == result  # naive bounds are read as UTC
    later = exposure_ranking(session, since=T3)
    assert [(r.name, r.cards, r.restricted_turns) for r in later.rows] == [
        ("alice", 0, 1),
        ("carol", 0, 1),
    ]


def test_limit_keeps_the_top_and_still_counts_every_member(session: Session) -> None:
    build_fixture(session)
    result = exposure_ranking(session, limit=1)
    assert ranked(result) == EXPECTED_ALL[:1]
    assert result.members == 3
    with pytest.raises(UserError, match="limit"):
        exposure_ranking(session, limit=0)


def test_no_exposure_is_an_empty_ranking_and_an_empty_catalogue_has_no_share(
    session: Session,
) -> None:
    assert exposure_ranking(session) == ExposureRanking(internal_cards=0, members=0, rows=[])
    alice = create_user(session, "alice", "member")[0].id
    add_exposed_turn(session, alice, T1, {"gone": (["k"], 4)})
    (row,) = exposure_ranking(session).rows
    assert (row.cards, row.corpus_share, row.verbatim_sentences) == (1, None, 1)


def test_member_drill_down_per_day_and_turns(session: Session) -> None:
    f = build_fixture(session)
    report = member_exposure(session, f["alice"])
    assert summary(report.member) == EXPECTED_ALL[0]
    assert report.internal_cards == 4
    assert [asdict(d) for d in report.days] == [
        {
            "day": "2026-03-01",
            "cards": 2,
            "verbatim_sentences": 2,
            "turns": 1,
            "restricted_turns": 0,
        },
        {
            "day": "2026-03-02",
            "cards": 1,
            "verbatim_sentences": 2,
            "turns": 1,
            "restricted_turns": 1,
        },
    ]
    assert report.turns_total == 3
    turns = report.turns
    assert [t.message_id for t in turns] == [f["a3"], f["a2"], f["a1"]]  # newest first
    assert [t.question for t in turns] == ["third?", "second?", "first?"]
    assert [t.restricted for t in turns] == [BUDGET, None, None]
    assert {t.conversation_id for t in turns} == {f["conversation"]}
    assert [t.created_at for t in turns] == [T3, T2, T1]
    assert turns[0].cards == []
    first = [(c.card_id, c.title, c.verbatim_sentences, c.longest_span) for c in turns[2].cards]
    assert first == [("p1", "Playbook 1", 2, 12), ("p2", "Playbook 2", 0, 3)]
    assert turns[2].cards[0].cited is True and turns[2].cards[0].card_sentences == 10


def test_drill_down_pages_and_windows_the_turns(session: Session) -> None:
    f = build_fixture(session)
    page = member_exposure(session, f["alice"], limit=1, offset=1)
    assert [t.message_id for t in page.turns] == [f["a2"]]
    assert page.turns_total == 3
    window = member_exposure(session, f["alice"], since=T2, until=T3)
    assert [t.message_id for t in window.turns] == [f["a2"]]
    assert [d.day for d in window.days] == ["2026-03-02"]
    assert window.member.cards == 1 and window.member.restricted_turns == 0
    with pytest.raises(UserError, match="offset"):
        member_exposure(session, f["alice"], offset=-1)


def test_drill_down_of_a_member_without_exposure_and_of_no_member(session: Session) -> None:
    f = build_fixture(session)
    report = member_exposure(session, f["dave"])
    assert (report.member.name, report.member.cards, report.member.corpus_share) == ("dave", 0, 0)
    assert report.days == [] and report.turns == [] and report.turns_total == 0
    carol = member_exposure(session, f["carol"])
    assert [(d.day, d.turns, d.restricted_turns) for d in carol.days] == [("2026-03-02", 0, 1)]
    assert [t.restricted for t in carol.turns] == [BUDGET]
    with pytest.raises(NotFoundError, match="user 999999 not found"):
        member_exposure(session, 999_999)


def test_days_are_utc_whatever_the_session_time_zone(session: Session, backend: str) -> None:
    f = build_fixture(session)
    if backend == "postgresql":
        # UTC+14: T1 would fall on the next calendar day in local time.
        session.execute(text("SET TIME ZONE 'Pacific/Kiritimati'"))
    assert [d.day for d in member_exposure(session, f["alice"]).days] == [
        "2026-03-01",
        "2026-03-02",
    ]


def test_sentences_that_are_not_a_list_of_keys_count_nothing(session: Session) -> None:
    """A hand edit or an older writer must not break the report or inflate the count."""
    alice = create_user(session, "alice", "member")[0].id
    add_exposed_turn(session, alice, T1, {"p1": (["k1"], 4), "p2": ([], 4), "p3": ([], 4)})
    odd: dict[str, Any] = {"p1": ["k1", 7, None, ["k2"], "k2"], "p2": "k9", "p3": {"k": 1}}
    for card, value in odd.items():
        session.execute(update(Exposure).where(Exposure.card_id == card).values(sentences=value))
    session.commit()
    (row,) = exposure_ranking(session).rows
    assert (row.cards, row.verbatim_sentences) == (3, 2)
    assert member_exposure(session, alice).days[0].verbatim_sentences == 2
    cards = {
        c.card_id: c.verbatim_sentences for c in member_exposure(session, alice).turns[0].cards
    }
    assert cards == {"p1": 2, "p2": 0, "p3": 0}


def test_identical_results_on_sqlite_and_postgresql(
    tmp_path: Any, postgres_url: str, clear: Callable[[Any], None]
) -> None:
    outputs = []
    for url in (f"sqlite:///{tmp_path / 'same.db'}", postgres_url):
        engine = make_engine(url)
        try:
            migrate(engine)
            clear(engine)
            with make_session_factory(engine)() as session:
                f = build_fixture(session)
                windows = [(None, None), (T2, T3), (T3, None)]
                result: dict[str, Any] = {
                    "ranking": [
                        asdict(exposure_ranking(session, since=s, until=u)) for s, u in windows
                    ],
                    "members": [
                        asdict(member_exposure(session, f[n], since=s, until=u))
                        for n in ("alice", "bob", "carol", "dave")
                        for s, u in windows
                    ],
                }
            outputs.append(_without_ids(result))
            clear(engine)
        finally:
            engine.dispose()
    assert outputs[0] == outputs[1]
    assert repr(outputs[0]) == repr(outputs[1])  # same types and float reprs too


def _without_ids(value: Any) -> Any:
    """Message and conversation ids are random per database; everything else must match."""
    if isinstance(value, dict):
        return {
            k: _without_ids(v)
            for k, v in value.items()
            if k not in {"message_id", "conversation_id", "user_id"}
        }
    if isinstance(value, list):
        return [_without_ids(v) for v in value]
    return value


def test_a_member_s_rows_stay_out_of_another_s_drill_down(session: Session) -> None:
    f = build_fixture(session)
    bob = member_exposure(session, f["bob"])
    assert bob.turns_total == 1
    assert [c.card_id for c in bob.turns[0].cards] == ["p3", "p1"]  # span 11 before span 5
    assert [(d.day, d.cards, d.verbatim_sentences) for d in bob.days] == [("2026-03-02", 2, 2)]


def test_calendar_assumptions() -> None:
    assert timedelta(seconds=1) == T2 - T1 and T1.date() != T2.date()
