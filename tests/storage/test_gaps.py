"""Knowledge gaps: which stored answers count, how questions group, counts per period."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import update
from sqlalchemy.orm import Session
from testenv import examples

from citewall.storage.gaps import (
    SIMILARITY,
    GapQuestion,
    gap_questions,
    group_questions,
    jaccard,
    period_start,
)
from citewall.storage.models import Message, new_uuid
from citewall.storage.turns import NewConversation
from citewall.storage.users import create_user
from citewall.text.terms import content_terms

from .test_conversations import turn

LOW = 0.5


def ask(session: Session, owner: int, question: str, status: str, support: float | None) -> str:
    conversation_id = new_uuid()
    _, assistant = turn(
        session,
        conversation_id,
        question=question,
        new_conversation=NewConversation(owner, question),
        answer_status=status,
        support=support,
        retrieval_query=question,
    )
    return str(assistant.id)


def test_not_found_and_low_support_answers_are_gaps_small_talk_is_not(session: Session) -> None:
    owner = create_user(session, "alice", "member")[0].id
    ask(session, owner, "saturday phone hours?", "not_found", 0.31)
    ask(session, owner, "meridian void window?", "answered", 0.42)
    ask(session, owner, "how do refunds work?", "answered", 0.71)
    ask(session, owner, "hi", "not_found", None)
    found = gap_questions(session, low_support=LOW)
    assert sorted(q.question for q in found) == ["meridian void window?", "saturday phone hours?"]
    assert {q.question: q.answer_status for q in found}["meridian void window?"] == "answered"


def test_time_window_bounds_the_questions(session: Session) -> None:
    owner = create_user(session, "alice", "member")[0].id
    old = ask(session, owner, "old question about saturday", "not_found", 0.2)
    ask(session, owner, "new question about saturday", "not_found", 0.2)
    session.execute(
        update(Message)
        .where(Message.id == old)
        .values(created_at=datetime.now(UTC) - timedelta(days=40))
    )
    session.commit()
    since = datetime.now(UTC) - timedelta(days=30)
    assert [q.question for q in gap_questions(session, low_support=LOW, since=since)] == [
        "new question about saturday"
    ]


def q(text: str, day: int, status: str = "not_found", support: float | None = 0.3) -> GapQuestion:
    when = datetime(2026, 11, day, 12, tzinfo=UTC)
    return GapQuestion(f"m{day}{text}", "c", text, status, support, when)


def test_similar_questions_group_and_the_largest_group_comes_first() -> None:
    questions = [
        q("what are your phone support hours on saturday", 26),
        q("phone support hours saturday?", 24),
        q("saturday phone support hours", 17),
        q("can I ship lithium batteries to australia", 25, status="answered", support=0.4),
    ]
    groups = group_questions(questions, low_support=LOW, period="week")
    assert [g.count for g in groups] == [3, 1]
    phone = groups[0]
    assert phone.question == "what are your phone support hours on saturday"
    assert (phone.not_found, phone.low_support) == (3, 0)
    assert dict(phone.per_period) == {"2026-11-23": 2, "2026-11-16": 1}
    assert phone.last_asked == datetime(2026, 11, 26, 12, tzinfo=UTC)
    assert (groups[1].not_found, groups[1].low_support) == (0, 1)


@pytest.mark.parametrize(
    ("period", "expected"),
    [("day", "2026-11-26"), ("week", "2026-11-23"), ("month", "2026-11-01")],
)
def test_period_start(period: str, expected: str) -> None:
    assert period_start(datetime(2026, 11, 26, 23, 59, tzinfo=UTC), period) == expected  # type: ignore[arg-type]


def test_a_time_bound_without_a_zone_is_read_as_utc(session: Session) -> None:
    owner = create_user(session, "alice", "member")[0].id
    ask(session, owner, "saturday phone hours?", "not_found", 0.31)
    naive_past = datetime.now(UTC).replace(tzinfo=None) - timedelta(days=1)
    assert len(gap_questions(session, low_support=LOW, since=naive_past)) == 1
    assert gap_questions(session, low_support=LOW, until=naive_past) == []


@settings(max_examples=examples(200))
@given(
    st.lists(
        st.lists(
            st.sampled_from(["phone", "hours", "saturday", "lithium", "dhl", "fee"]), max_size=4
        ),
        max_size=25,
    )
)
def test_grouping_matches_a_scan_of_every_group(word_lists: list[list[str]]) -> None:
    """The term index finds the group a scan over every group, in creation order, would."""
    texts = [" ".join(words) for words in word_lists]
    questions = [q(t, 1 + i % 28) for i, t in enumerate(texts)]
    scan: list[tuple[frozenset[str], list[str]]] = []
    for text in texts:
        terms = frozenset(content_terms(text))
        home = next((g for g in scan if jaccard(g[0], terms) >= SIMILARITY), None)
        if home is None:
            scan.append((terms, [text]))
        else:
            home[1].append(text)
    groups = group_questions(questions, low_support=LOW, period="day")
    assert sorted(len(m) for _, m in scan) == sorted(g.count for g in groups)
    assert {g.question for g in groups} == {m[0] for _, m in scan}
