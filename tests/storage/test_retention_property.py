"""Property: a retention run removes the words of exactly the conversations past the window
(each cited source's ``span``, the answer's sentence, too) and every rollup (entry
performance, feedback, knowledge gaps, exposure, headline, resolution per period, per top card
and per knowledge-gap group) gives the same figures before and after it, equal to a plain
model of the turns, but for the fields that are text by nature. A run stopped after any batch
and run again ends the same (SQLite; ``test_retention.py`` runs the same check once on
PostgreSQL)."""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from builders import add_conversation, retrieval_record, saved_turn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from testenv import examples

from citewall.chat.smalltalk import SMALL_TALK_REPLIES
from citewall.retrieval.covered import GapRule, TurnOutcome, coverage
from citewall.storage.analytics import entry_performance
from citewall.storage.db import make_engine, make_session_factory
from citewall.storage.exposure.report import exposure_ranking
from citewall.storage.exposure.rows import ExposureRecord
from citewall.storage.feedback_report import feedback_report
from citewall.storage.gaps import gap_questions, group_questions
from citewall.storage.headline import headline
from citewall.storage.models import CardRow, Conversation, Feedback, Message, RetrievalEvent
from citewall.storage.resolution import resolution_report
from citewall.storage.resolution_groups import (
    card_resolution,
    gap_group_conversations,
    gap_resolution,
    outcomes_of,
)
from citewall.storage.retention import RetentionPolicy, run_retention
from citewall.storage.schema import Database, migrate
from citewall.text.terms import content_terms

from .conftest import clear_tables, ensure_user
from .test_analytics_property import expected as expected_performance

CARDS = {
    "k0": "refund label voided",
    "k1": "invoice annual plan",
    "k2": "shipping canada customs",
    "k3": "password reset email",
    "k4": "label printer setup",
}
VOCAB = ["refund", "label", "invoice", "shipping", "canada", "password", "annual", "printer"]
BASE = datetime(2026, 1, 26, tzinfo=UTC)
NOW = BASE + timedelta(days=50)
RULE = GapRule(min_coverage=0.7, low_support=0.5)
SMALL_TALK = sorted(SMALL_TALK_REPLIES)[0]
#: Words of the answer sentence each cited source keeps as its span.
SPAN_WORDS = "Your own order"
WINDOW = timedelta(hours=72)


@dataclass(frozen=True)
class Turn:
    conversation: int  # 0..3; 0 and 1 belong to one member, 2 and 3 to another
    at: datetime
    small_talk: bool
    words: tuple[str, ...]
    retrieved: tuple[str, ...]
    cited: tuple[str, ...]
    status: str
    support: float
    rating: str | None
    comment: bool
    exposed: tuple[str, ...]


turn_strategy = st.builds(
    lambda conv, day, hour, small, words, retrieved, cited, status, support, rating, comment: (
        conv,
        day,
        hour,
        small,
        tuple(words),
        tuple(retrieved),
        tuple(c for c in cited if c in retrieved),
        status,
        support,
        rating,
        comment,
    ),
    st.integers(0, 3),
    st.integers(0, 45),
    st.integers(0, 23),
    st.booleans(),
    st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3),
    st.lists(st.sampled_from(sorted(CARDS)), unique=True, max_size=3),
    st.lists(st.sampled_from(sorted(CARDS)), unique=True, max_size=2),
    st.sampled_from(["answered", "not_found"]),
    st.sampled_from([0.3, 0.45, 0.6, 0.8]),
    st.sampled_from([None, "up", "down"]),
    st.booleans(),
)


def build(raw: list[tuple[Any, ...]]) -> list[Turn]:
    turns = []
    for i, (
        conv,
        day,
        hour,
        small,
        words,
        retrieved,
        cited,
        status,
        support,
        rating,
        comment,
    ) in enumerate(raw):
        at = BASE + timedelta(days=day, hours=hour, seconds=i)
        if small:
            turns.append(Turn(conv, at, True, ("hi",), (), (), "not_found", 0.0, None, False, ()))
            continue
        exposed = cited[:1]
        turns.append(
            Turn(
                conv, at, False, words, retrieved, cited, status, support, rating, comment, exposed
            )
        )
    return sorted(turns, key=lambda t: t.at)


def store(db: Database, turns: list[Turn]) -> dict[int, str]:
    """The turns in four conversations of two members; conversation number -> id."""
    with db.sessions() as session:
        for card_id, text in CARDS.items():
            session.add(
                CardRow(
                    id=card_id,
                    title=card_id,
                    body=text,
                    content_hash="0" * 64,
                    ingest_version=1,
                    is_external=False,
                )
            )
        session.commit()
        owners = [ensure_user(session, "ana"), ensure_user(session, "bo")]
        ids = {
            n: add_conversation(session, owners[n // 2], title=f"about {n}").id for n in range(4)
        }
        for turn in turns:
            conversation_id = ids[turn.conversation]
            if turn.small_talk:
                _, answer = saved_turn(
                    session,
                    conversation_id=conversation_id,
                    question="hi",
                    answer_content=SMALL_TALK,
                    answer_status="not_found",
                    now=turn.at,
                )
                continue
            sources = [
                {
                    "n": n,
                    "card_id": c,
                    "title": c,
                    "text": CARDS[c],
                    "span": f"{SPAN_WORDS} {' '.join(turn.words)} [{n}].",
                    "source_url": f"https://help.example/{c}",
                    "metadata": {},
                }
                for n, c in enumerate(turn.cited, start=1)
            ]
            _, answer = saved_turn(
                session,
                conversation_id=conversation_id,
                question=" ".join(turn.words) + " question?",
                answer_content="See " + " ".join(f"[{s['n']}]" for s in sources),
                sources=sources,
                hybrid_path="full",
                events=[
                    retrieval_record(
                        c, rank, dense_rank=rank, dense_score=0.5, cited=c in turn.cited
                    )
                    for rank, c in enumerate(turn.retrieved, start=1)
                ],
                answer_status=turn.status,
                support=turn.support,
                retrieval_query=" ".join(turn.words) if turn.retrieved else None,
                exposures=[ExposureRecord(c, True, (f"{c}-s1",), 4, 7) for c in turn.exposed],
                now=turn.at,
            )
            if turn.rating is not None:
                rated = turn.at + timedelta(minutes=1)
                session.add(
                    Feedback(
                        message_id=answer.id,
                        user_id=owners[turn.conversation // 2],
                        rating=turn.rating,
                        comment="it was my refund" if turn.comment else None,
                        created_at=rated,
                        updated_at=rated,
                    )
                )
                session.commit()
    return ids


def _without(items: list[Any], *text_fields: str) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in dataclasses.asdict(item).items() if k not in text_fields}
        for item in items
    ]


def rollups(db: Database) -> dict[str, Any]:
    """Every rollup's figures, the fields that are text by nature left out."""
    with db.sessions() as session:
        found = gap_questions(session, rule=RULE)
        feedback = feedback_report(session, limit=500)
        exposure = exposure_ranking(session, limit=100)
        out = {
            "performance": {p: entry_performance(session, period=p) for p in ("all", "week")},
            "headline": headline(session, small_talk_replies=SMALL_TALK_REPLIES),
            "feedback": (feedback.up, feedback.down, feedback.helpful_rate, feedback.cards),
            "feedback_worst": _without(feedback.worst, "question", "answer", "comment", "removed"),
            "gaps": {v: _without(qs, "question", "removed") for v, qs in found.items()},
            # Questions are grouped by their words (gone after the run): the per-period
            # counts of all groups together are the figure that stays.
            "gap_periods": {
                v: sum((g.per_period for g in group_questions(qs, period="week")), Counter())
                for v, qs in found.items()
            },
            "exposure": exposure,
            "resolution": {
                p: resolution_report(
                    session,
                    now=NOW,
                    window=WINDOW,
                    period=p,
                    small_talk_replies=SMALL_TALK_REPLIES,
                )
                for p in ("day", "week")
            },
            "resolution_cards": card_resolution(
                session, now=NOW, window=WINDOW, small_talk_replies=SMALL_TALK_REPLIES
            ),
            # Grouped by their words, as the gaps: the conversations of all groups together,
            # each with its outcome, are the figure that stays.
            "resolution_gaps": outcomes_of(
                session,
                {
                    c
                    for g in gap_resolution(session, rule=RULE, now=NOW, window=WINDOW, limit=500)
                    for c in gap_group_conversations(session, rule=RULE, group_id=g.group_id) or ()
                },
                now=NOW,
                window=WINDOW,
                small_talk_replies=SMALL_TALK_REPLIES,
            ),
        }
    return out


def model(turns: list[Turn]) -> dict[str, Any]:
    """The figures, in plain Python from the turns."""
    asked = [t for t in turns if not t.small_talk]
    # No handoffs in these conversations (the rollup counts them; retention does not touch them).
    performance = [(t.at, list(t.retrieved), list(t.cited), t.rating, False) for t in asked]
    listed: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for t in asked:
        question = " ".join(t.words) if t.retrieved else " ".join(t.words) + " question?"
        covered = coverage(question, [content_terms(f"{c} {CARDS[c]}") for c in t.retrieved])
        reason = RULE.reason(TurnOutcome(t.status, t.support, covered, t.rating))
        if reason is not None:
            listed["gap" if reason in ("not_found", "low_coverage") else "answered_badly"].append(
                (t.at.isoformat(), reason)
            )
    members = {
        owner: len({c for t in asked if t.conversation // 2 == owner for c in t.exposed})
        for owner in (0, 1)
    }
    return {
        "performance": {p: expected_performance(performance, p) for p in ("all", "week")},
        "questions": len(asked),
        "small_talk": len(turns) - len(asked),
        "not_found": sum(t.status == "not_found" for t in asked),
        "rated": (sum(t.rating == "up" for t in asked), sum(t.rating == "down" for t in asked)),
        "listed": {v: sorted(rows) for v, rows in listed.items()},
        "exposed_cards": sorted(n for n in members.values() if n),
    }


def check_against_model(figures: dict[str, Any], want: dict[str, Any]) -> None:
    assert figures["performance"] == want["performance"]
    numbers = figures["headline"]
    assert (numbers.questions, numbers.answers) == (want["questions"], want["questions"])
    assert (numbers.small_talk, numbers.not_found) == (want["small_talk"], want["not_found"])
    assert numbers.rated_down == want["rated"][1]
    assert figures["feedback"][:2] == want["rated"]
    for verdict in ("gap", "answered_badly"):
        got = sorted((q["asked_at"].isoformat(), q["reason"]) for q in figures["gaps"][verdict])
        assert got == want["listed"].get(verdict, []), verdict
    assert sorted(m.cards for m in figures["exposure"].rows) == want["exposed_cards"]


def check_words(db: Database, ids: dict[int, str], turns: list[Turn], days: int) -> None:
    """Exactly the conversations not updated within ``days`` lost their words."""
    cutoff = NOW - timedelta(days=days)
    last = {n: max((t.at for t in turns if t.conversation == n), default=None) for n in ids}
    with db.sessions() as session:
        for n, conversation_id in ids.items():
            old = last[n] is not None and last[n] < cutoff
            conversation = session.get(Conversation, conversation_id)
            assert conversation is not None
            assert (conversation.title == "(removed)") == old, n
            messages = session.scalars(
                select(Message).where(Message.conversation_id == conversation_id)
            ).all()
            for m in messages:
                kept_reply = m.role == "assistant" and m.content in SMALL_TALK_REPLIES
                assert (m.content == "") == (old and not kept_reply), (n, m.role, m.content)
                assert (m.content_removed_at is not None) == old
            queries = session.scalars(
                select(RetrievalEvent.query).where(
                    RetrievalEvent.conversation_id == conversation_id
                )
            ).all()
            assert all((q is None) == old for q in queries), n
            spans = [
                source.get("span")
                for m in messages
                for source in m.sources
                if isinstance(source, dict)
            ]
            if old:
                assert spans == [None] * len(spans), (n, spans)
            else:
                assert all(s is not None and SPAN_WORDS in s for s in spans), (n, spans)
            # The rest of each source is the knowledge base's and stays.
            assert all(
                source["source_url"].endswith(source["card_id"])
                for m in messages
                for source in m.sources
            )
            comments = session.scalars(
                select(Feedback.comment)
                .join(Message, Feedback.message_id == Message.id)
                .where(Message.conversation_id == conversation_id)
            ).all()
            if old:
                assert comments == [None] * len(comments)


def retention_roundtrip(
    db: Database, raw: list[tuple[Any, ...]], days: int, batch: int, stop_after: int
) -> None:
    turns = build(raw)
    ids = store(db, turns)
    want = model(turns)
    before = rollups(db)
    check_against_model(before, want)
    policy = RetentionPolicy(days=days, batch=batch, canned_replies=SMALL_TALK_REPLIES)
    asked = 0

    def interrupted() -> bool:
        nonlocal asked
        asked += 1
        return asked <= stop_after

    first = run_retention(db.sessions, policy, now=NOW, keep_going=interrupted)
    again = run_retention(db.sessions, policy, now=NOW)
    assert first.finished or stop_after < first.batches + 1
    assert again.finished
    after = rollups(db)
    check_against_model(after, want)
    assert after == before
    check_words(db, ids, turns, days)
    # A third run finds nothing left to do.
    assert run_retention(db.sessions, policy, now=NOW).conversations == 0


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[Database]:
    """A migrated SQLite file of the test's own (the property's database)."""
    engine = make_engine(f"sqlite:///{tmp_path / 'retention.db'}")
    migrate(engine)
    yield Database(engine=engine, sessions=make_session_factory(engine))
    engine.dispose()


@settings(
    max_examples=examples(15),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    raw=st.lists(turn_strategy, max_size=8),
    days=st.integers(1, 50),
    batch=st.integers(1, 3),
    stop_after=st.integers(0, 3),
)
def test_retention_keeps_every_rollup(
    sqlite_db: Database,
    raw: list[tuple[Any, ...]],
    days: int,
    batch: int,
    stop_after: int,
) -> None:
    clear_tables(sqlite_db.engine)
    retention_roundtrip(sqlite_db, raw, days, batch, stop_after)
