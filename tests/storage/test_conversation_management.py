"""A member's conversation list: search, rename, delete (hide); answering the last question
again (regenerated answers); stopped answers; which question an answer answers. Both databases.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from builders import add_conversation
from sqlalchemy.orm import Session

from citewall.errors import ConflictError, NotFoundError, StorageError, UserError
from citewall.retrieval.covered import GapRule
from citewall.storage.conversations import (
    get_conversation,
    hide_conversation,
    list_conversations,
    list_messages,
    rename_conversation,
)
from citewall.storage.gaps import gap_questions
from citewall.storage.models import new_uuid
from citewall.storage.turns import NewConversation, latest_turn
from citewall.storage.users import create_user

from .test_conversations import turn


@pytest.fixture
def alice(session: Session) -> int:
    return create_user(session, "alice", "member")[0].id


@pytest.fixture
def bob(session: Session) -> int:
    return create_user(session, "bob", "member")[0].id


def started(session: Session, user_id: int, question: str, title: str | None = None) -> str:
    """A conversation whose first question is ``question``; its id."""
    conversation_id = new_uuid()
    turn(
        session,
        conversation_id,
        question=question,
        new_conversation=NewConversation(user_id, title or question),
    )
    return conversation_id


def titles(session: Session, user_id: int | None, query: str | None = None) -> list[str]:
    return [c.title for c in list_conversations(session, user_id, query=query)]


def test_search_matches_title_and_own_questions_ignoring_case(
    session: Session, alice: int, bob: int
) -> None:
    started(session, alice, "How long do REFUNDS take?", title="Money back")
    started(session, alice, "Printer setup", title="Labels 50% off_sale")
    in_later_turn = started(session, alice, "Hello there", title="Greeting")
    turn(session, in_later_turn, question="and what about customs forms?")
    started(session, bob, "refunds for bob", title="Bob refunds")
    assert titles(session, alice, "refunds") == ["Money back"]
    assert titles(session, alice, "CUSTOMS") == ["Greeting"]
    assert titles(session, alice, "money") == ["Money back"]
    # LIKE wildcards in the query are literal characters.
    assert titles(session, alice, "50%") == ["Labels 50% off_sale"]
    assert titles(session, alice, "0%_") == []
    assert titles(session, alice, "_") == ["Labels 50% off_sale"]
    # Answers are not searched (the stored answer says "Refunds take 5 days").
    assert titles(session, alice, "escalate early") == []
    assert titles(session, alice, "nothing like this") == []
    assert set(titles(session, None, "refunds")) == {"Money back", "Bob refunds"}


def test_listing_names_the_owner(session: Session, alice: int) -> None:
    started(session, alice, "q")
    (summary,) = list_conversations(session, alice)
    assert summary.user_name == "alice" and summary.hidden_at is None


def test_rename_collapses_whitespace_keeps_the_order_and_refuses_bad_titles(
    session: Session, alice: int, bob: int
) -> None:
    older = started(session, alice, "first")
    started(session, alice, "second")
    before = get_conversation(session, older, alice).updated_at
    summary = rename_conversation(session, older, alice, "  Refund   questions \n")
    assert summary.title == "Refund questions" and summary.message_count == 2
    assert get_conversation(session, older, alice).updated_at == before
    assert titles(session, alice) == ["second", "Refund questions"]
    assert rename_conversation(session, older, alice, "é" * 200).title == "é" * 200
    for bad in ("", "   ", "x" * 201):
        with pytest.raises(UserError, match="1 to 200 characters"):
            rename_conversation(session, older, alice, bad)
    with pytest.raises(NotFoundError):
        rename_conversation(session, older, bob, "mine now")
    with pytest.raises(NotFoundError):
        rename_conversation(session, new_uuid(), alice, "unknown")


def test_a_hidden_conversation_is_unknown_to_its_member_and_kept_for_admins(
    session: Session, alice: int
) -> None:
    kept = started(session, alice, "keep me")
    gone = started(session, alice, "delete me")
    at = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
    hide_conversation(session, gone, alice, now=at)
    # The message an unknown id gets: a hidden id cannot be told apart.
    with pytest.raises(NotFoundError) as hidden:
        get_conversation(session, gone, alice)
    assert str(hidden.value) == f"conversation {gone!r} not found"
    assert titles(session, alice) == ["keep me"]
    assert titles(session, alice, "delete") == []
    for action in (
        lambda: hide_conversation(session, gone, alice),
        lambda: rename_conversation(session, gone, alice, "x"),
    ):
        with pytest.raises(NotFoundError):
            action()
    # Admins (user None) still see it, with when it was hidden; its turn is still stored.
    assert get_conversation(session, gone, None).hidden_at == at
    everyone = {c.id: c.hidden_at for c in list_conversations(session, None)}
    assert everyone == {kept: None, gone: at}
    assert [m.role for m in list_messages(session, gone)] == ["user", "assistant"]


def test_a_turn_that_was_running_when_its_conversation_was_hidden_is_stored_and_stays_hidden(
    session: Session, alice: int, bob: int
) -> None:
    gone = started(session, alice, "delete me while I answer")
    hide_conversation(session, gone, alice)
    # The member read the answer before it was stored: it must be recorded all the same.
    _, answer = turn(session, gone, question="one more?", owner=alice)
    assert answer.conversation_id == gone
    assert [m.role for m in list_messages(session, gone)] == ["user", "assistant"] * 2
    with pytest.raises(NotFoundError):
        get_conversation(session, gone, alice)
    assert titles(session, alice) == []
    # Never into another member's conversation, hidden or not.
    shown = started(session, alice, "mine")
    for conversation_id in (gone, shown):
        with pytest.raises(NotFoundError):
            turn(session, conversation_id, question="bob's?", owner=bob)
    assert len(list_messages(session, shown)) == 2


def test_regenerating_adds_an_answer_to_the_last_question(session: Session, alice: int) -> None:
    cid = started(session, alice, "first question")
    turn(session, cid, question="second question", answer_content="first answer [1].")
    question, answer = latest_turn(session, cid)
    assert question.content == "second question" and answer is not None
    asked, again = turn(
        session,
        cid,
        question="ignored: the stored question is answered",
        answer_content="another answer [2].",
        regenerated_from=answer.id,
    )
    assert asked.id == question.id
    assert again.regenerated_from == answer.id and again.seq == answer.seq + 1
    messages = list_messages(session, cid)
    assert [(m.role, m.regenerated_from) for m in messages] == [
        ("user", None),
        ("assistant", None),
        ("user", None),
        ("assistant", None),
        ("assistant", answer.id),
    ]
    assert latest_turn(session, cid) == (question, again)
    # Regenerating from an answer that is no longer the latest: someone came first.
    with pytest.raises((ConflictError, StorageError), match="moved on"):
        turn(session, cid, regenerated_from=answer.id)
    assert len(list_messages(session, cid)) == 5


def test_a_conversation_without_a_question_has_nothing_to_regenerate(
    session: Session, alice: int
) -> None:
    empty = add_conversation(session, alice)
    with pytest.raises(ConflictError, match="no question"):
        latest_turn(session, empty.id)


def test_a_stopped_answer_is_stored_with_its_status(session: Session, alice: int) -> None:
    cid = started(session, alice, "q")
    _, stopped = turn(session, cid, question="slow one", answer_status="stopped")
    assert stopped.answer_status == "stopped"
    with pytest.raises(StorageError, match="unknown answer_status"):
        turn(session, cid, answer_status="paused")


def test_reports_find_the_question_of_a_regenerated_answer(session: Session, alice: int) -> None:
    cid = started(session, alice, "first question")
    turn(session, cid, question="what about pallets?", answer_status="not_found", support=0.1)
    _, latest = latest_turn(session, cid)
    assert latest is not None
    turn(session, cid, answer_status="not_found", support=0.2, regenerated_from=latest.id)
    since = datetime.now(UTC) - timedelta(hours=1)
    found = gap_questions(session, rule=GapRule(min_coverage=0.5, low_support=0.5), since=since)
    asked = {(q.question, q.support) for q in found["gap"]}
    assert asked == {("what about pallets?", 0.1), ("what about pallets?", 0.2)}
