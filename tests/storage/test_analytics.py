"""Entry performance and the retrieval-event log, on hand-built turns, on both databases."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from citewall.errors import UserError
from citewall.kb.card import Card
from citewall.storage.analytics import entry_performance, retrieval_events
from citewall.storage.cards import upsert_cards
from citewall.storage.db import make_engine, make_session_factory
from citewall.storage.schema import migrate

T1 = datetime(2026, 3, 1, 23, 59, 59, tzinfo=UTC)  # a Sunday, last second of its ISO week
T2 = datetime(2026, 3, 2, 0, 0, 0, tzinfo=UTC)  # the Monday after: a new day and week
T3 = datetime(2026, 3, 31, 23, 30, tzinfo=UTC)  # last day of March (a Tuesday)
T4 = datetime(2026, 4, 1, 0, 10, tzinfo=UTC)  # first day of April, same week as T3

Row = tuple[Any, ...]


def build_fixture(session: Session, record: Callable[..., str]) -> None:
    """Four turns around day, week and month boundaries; see the expected tables below."""
    upsert_cards(
        session,
        [
            Card(id="a", title="A", body="a", url="https://help.example/a"),
            Card(id="b", title="B", body="b"),
            Card(id="c", title="C", body="c"),
        ],
        1,
    )
    record(session, T1, [("a", True), ("b", False), ("c", False)], ["a", "b"])
    record(session, T2, [("b", False), ("a", True)], ["b"])
    # "x" is cited without being retrieved (and is in no catalogue): counted from sources alone.
    record(session, T3, [("c", False), ("d", True)], ["c", "x"], external_cited=["x"])
    record(session, T4, [("c", False)], [], hybrid_path="rrf_only")
    record(session, T4 + timedelta(seconds=1), [("a", True)], [], hybrid_path=None)


def rows(result: list[dict[str, Any]]) -> list[Row]:
    return [
        (
            r["card_id"],
            r["period_start"],
            r["times_retrieved"],
            r["times_cited"],
            r["cite_rate"],
            r["mean_rank"],
            r["last_cited"],
            r["is_external"],
        )
        for r in result
    ]


I1, I2, I3 = T1.isoformat(), T2.isoformat(), T3.isoformat()

EXPECTED_ALL: list[Row] = [
    # card, period, retrieved, cited, cite_rate, mean_rank, last_cited, external
    ("b", None, 2, 2, 1.0, 1.5, I2, False),
    ("a", None, 3, 1, 0.3333, 1.3333, I1, True),
    ("c", None, 3, 1, 0.3333, 1.6667, I3, False),
    ("x", None, 0, 1, None, None, I3, True),
    ("d", None, 1, 0, 0.0, 2.0, None, True),
]
EXPECTED_DAY: list[Row] = [
    ("a", "2026-04-01", 1, 0, 0.0, 1.0, None, True),
    ("c", "2026-04-01", 1, 0, 0.0, 1.0, None, False),
    ("c", "2026-03-31", 1, 1, 1.0, 1.0, I3, False),
    ("x", "2026-03-31", 0, 1, None, None, I3, True),
    ("d", "2026-03-31", 1, 0, 0.0, 2.0, None, True),
    ("b", "2026-03-02", 1, 1, 1.0, 1.0, I2, False),
    ("a", "2026-03-02", 1, 0, 0.0, 2.0, None, True),
    ("a", "2026-03-01", 1, 1, 1.0, 1.0, I1, True),
    ("b", "2026-03-01", 1, 1, 1.0, 2.0, I1, False),
    ("c", "2026-03-01", 1, 0, 0.0, 3.0, None, False),
]
EXPECTED_WEEK: list[Row] = [
    ("c", "2026-03-30", 2, 1, 0.5, 1.0, I3, False),
    ("x", "2026-03-30", 0, 1, None, None, I3, True),
    ("a", "2026-03-30", 1, 0, 0.0, 1.0, None, True),
    ("d", "2026-03-30", 1, 0, 0.0, 2.0, None, True),
    ("b", "2026-03-02", 1, 1, 1.0, 1.0, I2, False),
    ("a", "2026-03-02", 1, 0, 0.0, 2.0, None, True),
    ("a", "2026-02-23", 1, 1, 1.0, 1.0, I1, True),
    ("b", "2026-02-23", 1, 1, 1.0, 2.0, I1, False),
    ("c", "2026-02-23", 1, 0, 0.0, 3.0, None, False),
]
EXPECTED_MONTH: list[Row] = [
    ("a", "2026-04-01", 1, 0, 0.0, 1.0, None, True),
    ("c", "2026-04-01", 1, 0, 0.0, 1.0, None, False),
    ("b", "2026-03-01", 2, 2, 1.0, 1.5, I2, False),
    ("a", "2026-03-01", 2, 1, 0.5, 1.5, I1, True),
    ("c", "2026-03-01", 2, 1, 0.5, 2.0, I3, False),
    ("x", "2026-03-01", 0, 1, None, None, I3, True),
    ("d", "2026-03-01", 1, 0, 0.0, 2.0, None, True),
]


def test_calendar_assumptions() -> None:
    assert T1.weekday() == 6 and T2.weekday() == 0  # Sunday, Monday
    assert (T3 - timedelta(days=T3.weekday())).date().isoformat() == "2026-03-30"


@pytest.mark.parametrize(
    ("period", "expected"),
    [
        ("all", EXPECTED_ALL),
        ("day", EXPECTED_DAY),
        ("week", EXPECTED_WEEK),
        ("month", EXPECTED_MONTH),
    ],
)
def test_entry_performance_on_hand_built_turns(
    session: Session, record: Callable[..., str], period: Any, expected: list[Row]
) -> None:
    build_fixture(session, record)
    assert rows(entry_performance(session, period=period)) == expected


def test_periods_are_utc_whatever_the_session_time_zone(
    session: Session, record: Callable[..., str], backend: str
) -> None:
    build_fixture(session, record)
    if backend == "postgresql":
        # UTC+14: every T above would fall on the next calendar day in local time.
        session.execute(text("SET TIME ZONE 'Pacific/Kiritimati'"))
    assert rows(entry_performance(session, period="day")) == EXPECTED_DAY
    assert rows(entry_performance(session, period="week")) == EXPECTED_WEEK


def test_filters_window_card_and_limit(session: Session, record: Callable[..., str]) -> None:
    build_fixture(session, record)
    march = entry_performance(session, since=T2, until=T4)  # T2 inclusive, T4 exclusive
    naive = T4.replace(tzinfo=None)  # read as UTC
    assert entry_performance(session, since=T2, until=naive) == march
    assert rows(march) == [
        ("b", None, 1, 1, 1.0, 1.0, I2, False),
        ("c", None, 1, 1, 1.0, 1.0, I3, False),
        ("x", None, 0, 1, None, None, I3, True),
        ("a", None, 1, 0, 0.0, 2.0, None, True),
        ("d", None, 1, 0, 0.0, 2.0, None, True),
    ]
    assert rows(entry_performance(session, card_id="a", period="month")) == [
        r for r in EXPECTED_MONTH if r[0] == "a"
    ]
    assert rows(entry_performance(session, limit=2)) == EXPECTED_ALL[:2]
    assert entry_performance(session, card_id="nope") == []


def test_bad_arguments_are_user_errors(session: Session) -> None:
    with pytest.raises(UserError, match="unknown period 'year'"):
        entry_performance(session, period="year")  # type: ignore[arg-type]
    with pytest.raises(UserError, match="limit"):
        retrieval_events(session, limit=0)
    with pytest.raises(UserError, match="unknown hybrid_path 'fast'"):
        retrieval_events(session, hybrid_path="fast")


def test_retrieval_event_log_filters(session: Session, record: Callable[..., str]) -> None:
    build_fixture(session, record)
    log = retrieval_events(session)
    assert len(log) == 9
    assert [e["card_id"] for e in log[:3]] == ["a", "c", "d"]  # newest first
    first = log[0]
    assert first["created_at"] == (T4 + timedelta(seconds=1)).isoformat()
    assert first["hybrid_path"] is None and first["final_rank"] == 1
    assert set(first) >= {"message_id", "conversation_id", "dense_score", "rerank_logit"}
    assert [e["card_id"] for e in retrieval_events(session, card_id="b")] == ["b", "b"]
    assert [e["card_id"] for e in retrieval_events(session, hybrid_path="rrf_only")] == ["c"]
    assert [e["card_id"] for e in retrieval_events(session, hybrid_path="none")] == ["a"]
    cited = retrieval_events(session, cited=True)
    assert sorted(e["card_id"] for e in cited) == ["a", "b", "b", "c"]
    assert all(e["cited"] is True for e in cited)
    assert len(retrieval_events(session, cited=False)) == 5
    window = retrieval_events(session, since=T2, until=T4)
    assert sorted(e["card_id"] for e in window) == ["a", "b", "c", "d"]
    assert [e["id"] for e in retrieval_events(session, limit=2, offset=1)] == [
        e["id"] for e in log[1:3]
    ]
    assert retrieval_events(session, hybrid_path="full", card_id="d")[0]["dense_score"] == 0.5


def test_identical_results_on_sqlite_and_postgresql(
    tmp_path: Any,
    postgres_url: str,
    record: Callable[..., str],
    clear: Callable[[Any], None],
) -> None:
    outputs = []
    for url in (f"sqlite:///{tmp_path / 'same.db'}", postgres_url):
        engine = make_engine(url)
        try:
            migrate(engine)
            clear(engine)
            with make_session_factory(engine)() as session:
                build_fixture(session, record)
                result: dict[str, Any] = {
                    p: entry_performance(session, period=p) for p in ("all", "day", "week", "month")
                }
                result["events"] = [
                    {k: v for k, v in e.items() if k not in {"message_id", "conversation_id"}}
                    for e in retrieval_events(session, limit=1000)
                ]
            outputs.append(result)
            clear(engine)
        finally:
            engine.dispose()
    assert outputs[0] == outputs[1]
    assert repr(outputs[0]) == repr(outputs[1])  # same types and float reprs too


def test_rollup_ignores_source_elements_that_are_not_objects(
    session: Session, record: Callable[..., str]
) -> None:
    """Rows written before validation existed (or by hand) must not break the rollup."""
    from sqlalchemy import update

    from citewall.storage.models import Message

    message_id = record(session, T1, [("a", True)], ["a"])
    sources = [*session.get(Message, message_id).sources, "stray", 3, None, ["x"]]  # type: ignore[union-attr]
    session.execute(update(Message).where(Message.id == message_id).values(sources=sources))
    session.commit()
    assert rows(entry_performance(session)) == [("a", None, 1, 1, 1.0, 1.0, I1, True)]
