"""Knowledge gaps: which stored answers count and in which list, how questions group, counts
per period."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import update
from sqlalchemy.orm import Session
from testenv import examples

from citewall.retrieval.covered import GapRule
from citewall.storage.feedback import put_feedback
from citewall.storage.gaps import (
    SIMILARITY,
    GapQuestion,
    gap_questions,
    group_questions,
    jaccard,
    period_start,
)
from citewall.storage.models import CardRow, Message, new_uuid
from citewall.storage.turns import NewConversation
from citewall.storage.users import create_user
from citewall.text.terms import content_terms

from .test_conversations import event, turn

LOW = 0.5
RULE = GapRule(min_coverage=0.5, low_support=LOW)
#: What the turns below retrieve (``turn``'s events: billing-refunds first).
CARDS = {
    "billing-refunds": ("Refunds", "Refunds of annual plans take 5 business days to arrive."),
    "playbook-escalation": ("Escalation", "Escalate a refund dispute to the billing team."),
}


def store_cards(session: Session) -> None:
    for card_id, (title, body) in CARDS.items():
        session.add(
            CardRow(
                id=card_id,
                title=title,
                body=body,
                content_hash=card_id,
                ingest_version=1,
                is_external=True,
            )
        )
    session.commit()


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


def listed(session: Session, **bounds: datetime) -> dict[str, list[str]]:
    found = gap_questions(session, rule=RULE, **bounds)
    return {verdict: [q.question for q in qs] for verdict, qs in found.items()}


def test_not_found_and_uncovered_answers_are_gaps_small_talk_is_not(session: Session) -> None:
    owner = create_user(session, "alice", "member")[0].id
    store_cards(session)
    ask(session, owner, "saturday phone hours?", "not_found", 0.31)
    ask(session, owner, "lithium batteries to australia?", "answered", 0.42)
    # Uncovered words but a close dense match: not enough to call it a gap.
    ask(session, owner, "lithium refund for australia?", "answered", 0.62)
    ask(session, owner, "how long do refunds of annual plans take?", "answered", 0.71)
    ask(session, owner, "hi", "not_found", None)
    found = gap_questions(session, rule=RULE)
    assert [q.question for q in found["gap"]] == [
        "lithium batteries to australia?",
        "saturday phone hours?",
    ]
    assert [q.reason for q in found["gap"]] == ["low_coverage", "not_found"]
    assert found["answered_badly"] == []


def test_a_covered_question_with_low_support_is_answered_badly_not_a_gap(
    session: Session,
) -> None:
    """The earlier report listed covered questions with low dense support as gaps."""
    owner = create_user(session, "alice", "member")[0].id
    store_cards(session)
    ask(session, owner, "refunds of annual plans, how many days?", "answered", 0.42)
    assert listed(session) == {
        "gap": [],
        "answered_badly": ["refunds of annual plans, how many days?"],
    }


def test_a_covered_answer_rated_not_helpful_is_answered_badly(session: Session) -> None:
    """The earlier report missed confidently wrong answers members rated down."""
    owner = create_user(session, "alice", "member")[0].id
    store_cards(session)
    rated = ask(session, owner, "how long do refunds of annual plans take?", "answered", 0.8)
    ask(session, owner, "do annual plans get refunds?", "answered", 0.8)
    assert listed(session) == {"gap": [], "answered_badly": []}
    put_feedback(session, message_id=rated, user_id=owner, rating="down", comment=None)
    found = gap_questions(session, rule=RULE)
    assert [(q.question, q.reason, q.rating) for q in found["answered_badly"]] == [
        ("how long do refunds of annual plans take?", "rated_down", "down")
    ]


def test_coverage_reads_the_cards_as_stored_now(session: Session) -> None:
    """A question answered from a card deleted since is no longer covered."""
    owner = create_user(session, "alice", "member")[0].id
    question = "how long do refunds of annual plans take?"
    ask(session, owner, question, "answered", 0.42)
    found = gap_questions(session, rule=RULE)
    assert [(q.reason, q.coverage) for q in found["gap"]] == [("low_coverage", 0.0)]
    store_cards(session)
    assert listed(session) == {"gap": [], "answered_badly": [question]}


def test_a_follow_up_is_covered_by_the_query_it_was_retrieved_with(session: Session) -> None:
    owner = create_user(session, "alice", "member")[0].id
    store_cards(session)
    turn(
        session,
        new_uuid(),
        question="what about the yearly ones?",
        new_conversation=NewConversation(owner, "refunds"),
        answer_status="answered",
        support=0.45,
        retrieval_query="how long do refunds take? and for annual plans?",
        events=[event("billing-refunds", 1)],
    )
    assert listed(session) == {"gap": [], "answered_badly": ["what about the yearly ones?"]}


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
    assert listed(session, since=since)["gap"] == ["new question about saturday"]


def q(text: str, day: int, status: str = "not_found", support: float | None = 0.3) -> GapQuestion:
    when = datetime(2026, 11, day, 12, tzinfo=UTC)
    reason = "not_found" if status == "not_found" else "low_coverage"
    return GapQuestion(f"m{day}{text}", "c", text, status, support, when, reason=reason)


def test_similar_questions_group_and_the_largest_group_comes_first() -> None:
    questions = [
        q("what are your phone support hours on saturday", 26),
        q("phone support hours saturday?", 24),
        q("saturday phone support hours", 17),
        q("can I ship lithium batteries to australia", 25, status="answered", support=0.4),
    ]
    groups = group_questions(questions, period="week")
    assert [g.count for g in groups] == [3, 1]
    phone = groups[0]
    assert phone.question == "what are your phone support hours on saturday"
    assert (phone.not_found, phone.low_coverage) == (3, 0)
    assert dict(phone.per_period) == {"2026-11-23": 2, "2026-11-16": 1}
    assert phone.last_asked == datetime(2026, 11, 26, 12, tzinfo=UTC)
    assert (groups[1].not_found, groups[1].low_coverage) == (0, 1)


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
    assert listed(session, since=naive_past)["gap"] == ["saturday phone hours?"]
    assert listed(session, until=naive_past)["gap"] == []


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
    groups = group_questions(questions, period="day")
    assert sorted(len(m) for _, m in scan) == sorted(g.count for g in groups)
    assert {g.question for g in groups} == {m[0] for _, m in scan}
