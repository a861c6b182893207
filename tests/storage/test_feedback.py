"""Feedback on answers: one rating per member per answer, replaced and withdrawn; only on the
member's own answers; the admin feedback report. Both databases."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from citewall.errors import NotFoundError, UserError
from citewall.kb.card import Card
from citewall.storage.cards import upsert_cards
from citewall.storage.conversations import hide_conversation, list_messages
from citewall.storage.feedback import delete_feedback, feedback_of, put_feedback
from citewall.storage.feedback_report import feedback_report
from citewall.storage.models import Feedback, Message, new_uuid
from citewall.storage.turns import NewConversation, latest_turn
from citewall.storage.users import create_user

from .conftest import ensure_user
from .test_conversations import turn

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


@pytest.fixture
def alice(session: Session) -> int:
    return create_user(session, "alice", "member")[0].id


def answer_of(session: Session, user_id: int, question: str = "q", **overrides: object) -> str:
    conversation_id = new_uuid()
    _, answer = turn(
        session,
        conversation_id,
        question=question,
        new_conversation=NewConversation(user_id, question),
        **overrides,
    )
    return str(answer.id)


def conversation_of(session: Session, answer_id: str) -> str:
    message = session.get(Message, answer_id)
    assert message is not None
    return message.conversation_id


def rows(session: Session) -> int:
    return int(session.scalar(select(func.count()).select_from(Feedback)) or 0)


def test_rating_again_replaces_and_delete_withdraws(session: Session, alice: int) -> None:
    answer = answer_of(session, alice)
    first = put_feedback(
        session, message_id=answer, user_id=alice, rating="down", comment="  too vague  ", now=T0
    )
    assert (first.rating, first.comment, first.created_at) == ("down", "too vague", T0)
    later = T0 + timedelta(minutes=5)
    again = put_feedback(
        session, message_id=answer, user_id=alice, rating="up", comment="   ", now=later
    )
    assert rows(session) == 1
    assert (again.rating, again.comment, again.created_at, again.updated_at) == (
        "up",
        None,
        T0,
        later,
    )
    assert feedback_of(session, [answer, "other"], alice)[answer].rating == "up"
    delete_feedback(session, message_id=answer, user_id=alice)
    delete_feedback(session, message_id=answer, user_id=alice)  # nothing left: still fine
    assert rows(session) == 0 and feedback_of(session, [answer], alice) == {}


def test_comments_and_ratings_are_checked(session: Session, alice: int) -> None:
    answer = answer_of(session, alice)
    put_feedback(session, message_id=answer, user_id=alice, rating="up", comment="x" * 2000)
    with pytest.raises(UserError, match="at most 2000 characters, got 2001"):
        put_feedback(session, message_id=answer, user_id=alice, rating="up", comment="x" * 2001)
    with pytest.raises(UserError, match="rating must be one of up, down"):
        put_feedback(session, message_id=answer, user_id=alice, rating="meh", comment=None)  # type: ignore[arg-type]
    assert feedback_of(session, [answer], alice)[answer].comment == "x" * 2000


def test_only_answers_of_the_members_own_shown_conversations(session: Session, alice: int) -> None:
    bob = create_user(session, "bob", "member")[0].id
    mine = answer_of(session, alice)
    theirs = answer_of(session, bob)
    (question, _) = list_messages(session, conversation_of(session, mine))
    hidden = answer_of(session, alice, "to delete")
    hide_conversation(session, conversation_of(session, hidden), alice)
    for message_id in (theirs, str(question.id), hidden, new_uuid(), "x" * 500, ""):
        for action in (
            lambda m=message_id: put_feedback(
                session, message_id=m, user_id=alice, rating="up", comment=None
            ),
            lambda m=message_id: delete_feedback(session, message_id=m, user_id=alice),
        ):
            with pytest.raises(NotFoundError, match="not found") as info:
                action()
            assert "conversation" not in str(info.value)  # says nothing of where it is
    assert rows(session) == 0
    put_feedback(session, message_id=mine, user_id=alice, rating="up", comment=None)
    assert rows(session) == 1


def test_the_report_counts_rank_and_names_what_was_rated(
    session: Session, record: Callable[..., str]
) -> None:
    member = ensure_user(session)  # the owner of the turns ``record`` saves
    upsert_cards(
        session,
        [
            Card(id="help-a", title="Help A", body="b", url="https://help.example/a"),
            Card(id="pb-b", title="Playbook B", body="b"),
        ],
        1,
    )

    def rated(cited: list[str], rating: str, at: datetime, comment: str | None = None) -> str:
        answer = record(session, at, [(c, c.startswith("help")) for c in cited], cited)
        put_feedback(
            session, message_id=answer, user_id=member, rating=rating, comment=comment, now=at
        )
        return answer

    up_a = rated(["help-a"], "up", T0)
    down_ab = rated(["help-a", "pb-b"], "down", T0 + timedelta(hours=1), "wrong")
    down_gone = rated(["gone-card"], "down", T0 + timedelta(hours=2))
    up_b = rated(["pb-b"], "up", T0 + timedelta(hours=3))
    outside = rated(["help-a"], "down", T0 - timedelta(days=3))

    report = feedback_report(session, since=T0 - timedelta(days=1))
    assert (report.up, report.down, report.helpful_rate) == (2, 2, 0.5)
    assert [
        (c.card_id, c.title, c.external, c.up, c.down, c.helpful_rate) for c in report.cards
    ] == [
        ("gone-card", "GONE-CARD", False, 0, 1, 0.0),  # not in the catalogue: the source's title
        ("help-a", "Help A", True, 1, 1, 0.5),
        ("pb-b", "Playbook B", False, 1, 1, 0.5),
    ]
    assert [w.message_id for w in report.worst] == [down_gone, down_ab, up_b, up_a]
    worst = report.worst[1]
    assert (worst.rating, worst.comment, worst.user_name, worst.question) == (
        "down",
        "wrong",
        "analyst",
        "q",
    )
    assert worst.answer == "[1] [2]"  # as stored: markers kept for admins
    assert outside not in {w.message_id for w in report.worst}
    assert [w.message_id for w in feedback_report(session, limit=1).worst] == [down_gone]
    assert len(feedback_report(session, limit=1).cards) == 1
    empty = feedback_report(session, since=T0 + timedelta(days=9))
    assert (empty.up, empty.down, empty.helpful_rate, empty.cards, empty.worst) == (
        0,
        0,
        None,
        [],
        [],
    )


def test_the_report_keeps_hidden_conversations_and_regenerated_answers(
    session: Session, alice: int
) -> None:
    conversation_id = new_uuid()
    turn(
        session,
        conversation_id,
        question="pallets?",
        new_conversation=NewConversation(alice, "pallets?"),
    )
    _, first = latest_turn(session, conversation_id)
    assert first is not None
    _, again = turn(session, conversation_id, regenerated_from=first.id)
    put_feedback(session, message_id=str(again.id), user_id=alice, rating="down", comment=None)
    hide_conversation(session, conversation_id, alice)
    (rated,) = feedback_report(session).worst
    assert (rated.message_id, rated.question) == (str(again.id), "pallets?")
    session.execute(update(Feedback).values(updated_at=T0))
    session.commit()
    assert feedback_report(session, until=T0).worst == []
    assert len(feedback_report(session, since=T0).worst) == 1
