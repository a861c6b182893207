"""Retention, erasure and the lease on both databases: the property's round trip once on
PostgreSQL (and SQLite) with a fixed set of turns, one runner at a time, the audit log trimmed
only past its own window, and an erasure interrupted after it was recorded carried out later."""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy import func, select

from citewall.chat.smalltalk import SMALL_TALK_REPLIES
from citewall.retrieval.covered import GapRule
from citewall.storage import audit, leases
from citewall.storage.audit import AuditEvent
from citewall.storage.erasure import carry_out, pending_erasures, request_erasure, resume_erasures
from citewall.storage.feedback_report import feedback_report
from citewall.storage.gaps import gap_questions
from citewall.storage.handoffs import create_handoff
from citewall.storage.models import (
    ApiToken,
    AuditEntry,
    Conversation,
    EvalQuestion,
    Feedback,
    Handoff,
    Message,
    User,
)
from citewall.storage.retention import RetentionPolicy, run_retention
from citewall.storage.schema import Database
from citewall.storage.users import create_user

from .test_retention_property import NOW, retention_roundtrip

#: Turns in every conversation, old and recent, small talk, ratings and comments.
TURNS = [
    (0, 1, 3, False, ("refund", "label"), ("k0", "k4"), ("k0",), "answered", 0.45, "down", True),
    (0, 2, 5, True, ("hi",), (), (), "not_found", 0.0, None, False),
    (1, 30, 1, False, ("invoice",), ("k1",), ("k1",), "answered", 0.8, "up", False),
    (2, 3, 9, False, ("password", "canada"), ("k3", "k2"), (), "not_found", 0.3, None, False),
    (2, 44, 9, False, ("shipping",), ("k2",), ("k2",), "answered", 0.6, "up", True),
    (3, 5, 2, False, ("printer",), (), (), "answered", 0.3, None, False),
]


def test_a_retention_run_keeps_every_rollup(db: Database) -> None:
    retention_roundtrip(db, TURNS, days=20, batch=1, stop_after=1)


def test_one_runner_holds_the_lease_until_it_expires(db: Database) -> None:
    ttl = timedelta(minutes=10)
    with db.sessions() as session:
        assert leases.acquire(session, "retention", "a", now=NOW, ttl=ttl)
        assert not leases.acquire(session, "retention", "b", now=NOW, ttl=ttl)
        assert leases.acquire(session, "retention", "a", now=NOW + ttl / 2, ttl=ttl)  # renewed
        assert not leases.acquire(session, "retention", "b", now=NOW + ttl, ttl=ttl)
        assert leases.acquire(session, "retention", "b", now=NOW + 2 * ttl, ttl=ttl)  # expired
        leases.release(session, "retention", "a")  # not a's any more: a no-op
        assert not leases.acquire(session, "retention", "a", now=NOW + 2 * ttl, ttl=ttl)
        leases.release(session, "retention", "b")
        assert leases.acquire(session, "retention", "a", now=NOW + 2 * ttl, ttl=ttl)


def _line(at_days: int) -> AuditEvent:
    return AuditEvent(
        actor="ada",
        actor_user_id=1,
        via="bearer",
        action="conversation.read",
        target=f"x:{at_days}",
    )


def test_the_audit_log_is_kept_through_retention_and_trimmed_past_its_own_window(
    db: Database,
) -> None:
    with db.sessions() as session:
        for days in (400, 100, 10):
            audit.append(session, _line(days), now=NOW - timedelta(days=days))
    run_retention(db.sessions, RetentionPolicy(days=1), now=NOW)
    with db.sessions() as session:
        assert session.scalar(select(func.count(AuditEntry.id))) == 3
    report = run_retention(db.sessions, RetentionPolicy(days=1, audit_days=365), now=NOW)
    assert report.audit_lines == 1
    with db.sessions() as session:
        rows, total = audit.entries(session)
        # The trimmed line is gone; the run that trimmed it is a line of its own.
        assert total == 3 and [r.target for r in rows[1:]] == ["x:10", "x:100"]
        assert rows[0].action == "retention" and rows[0].detail["audit_lines_trimmed"] == 1


def test_an_erasure_recorded_and_interrupted_is_carried_out_later(db: Database) -> None:
    with db.sessions() as session:
        user, _ = create_user(session, "leaving")
        user_id = user.id
        conversation = Conversation(user_id=user_id, title="my refund", updated_at=NOW)
        session.add(conversation)
        session.flush()
        session.add_all(
            [
                Message(conversation_id=conversation.id, seq=1, role="user", content="my refund"),
                Message(conversation_id=conversation.id, seq=2, role="assistant", content="ok"),
            ]
        )
        session.commit()
        request = request_erasure(
            session,
            user_id,
            requested_by="cli:ops",
            now=NOW,
            audit=AuditEvent(
                actor="cli:ops", actor_user_id=None, via="cli", action="erasure", target="u"
            ),
        )
        # Recorded: the user can no longer sign in, nothing is removed yet.
        assert session.scalar(select(User.disabled_at).where(User.id == user_id)) is not None
        tokens = session.scalars(select(ApiToken).where(ApiToken.user_id == user_id)).all()
        assert tokens and all(t.revoked_at is not None for t in tokens)
        again = request_erasure(session, user_id, requested_by="cli:ops", now=NOW, audit=_line(0))
        assert again.id == request.id
        assert pending_erasures(session) == [request.id]
    ticks = iter(NOW + timedelta(seconds=s) for s in range(1, 100))
    (done,) = resume_erasures(
        db.sessions, clock=lambda: next(ticks), canned_replies=SMALL_TALK_REPLIES
    )
    assert done.status == "done" and done.receipt["removed"]["messages.content"] == 2
    assert done.receipt["kept"]["conversations"] == 1
    # Real times: recorded, then the words removed, then done (each when it happened).
    with db.sessions() as session:
        removed_at = set(
            session.scalars(
                select(Message.content_removed_at).where(Message.conversation_id == conversation.id)
            )
        )
    assert done.requested_at == NOW
    assert removed_at == {NOW + timedelta(seconds=1)}
    assert done.completed_at == NOW + timedelta(seconds=2)
    again = carry_out(db.sessions, request.id, clock=lambda: NOW + timedelta(days=1))
    assert again.receipt == done.receipt and again.completed_at == done.completed_at  # idempotent
    with db.sessions() as session:
        assert session.get(User, user_id) is None
        assert pending_erasures(session) == []
        lines = session.scalars(select(AuditEntry.action)).all()
        assert lines == ["erasure"]  # the second request was the open one, not a new line


def test_a_comment_written_after_a_run_goes_at_the_next(db: Database) -> None:
    """Rating an old answer does not move its conversation on; its comment is words all the
    same, and the next run removes it."""
    with db.sessions() as session:
        user, _ = create_user(session, "late")
        old = NOW - timedelta(days=40)
        conversation = Conversation(user_id=user.id, title="t", created_at=old, updated_at=old)
        session.add(conversation)
        session.flush()
        answer = Message(
            conversation_id=conversation.id, seq=1, role="assistant", content="a", created_at=old
        )
        session.add(answer)
        session.commit()
        answer_id, user_id = answer.id, user.id
    policy = RetentionPolicy(days=30)
    assert run_retention(db.sessions, policy, now=NOW).conversations == 1
    with db.sessions() as session:
        session.add(Feedback(message_id=answer_id, user_id=user_id, rating="down", comment="late"))
        session.commit()
    again = run_retention(db.sessions, policy, now=NOW)
    assert again.removed["feedback.comment"] == 1
    with db.sessions() as session:
        assert session.scalar(select(Feedback.comment)) is None
    assert run_retention(db.sessions, policy, now=NOW).conversations == 0


def test_a_saved_test_question_of_an_old_conversation_goes_with_its_words(
    db: Database,
) -> None:
    """A test question saved from a member's conversation is a copy of their words: the run
    that removes the conversation's words removes it, and the one of a recent conversation
    stays."""
    with db.sessions() as session:
        user, _ = create_user(session, "tester")
        kept: dict[str, str] = {}
        for name, age in (("old", 40), ("recent", 2)):
            at = NOW - timedelta(days=age)
            conversation = Conversation(user_id=user.id, title=name, created_at=at, updated_at=at)
            session.add(conversation)
            session.flush()
            question = Message(
                conversation_id=conversation.id, seq=1, role="user", content=name, created_at=at
            )
            answer = Message(
                conversation_id=conversation.id, seq=2, role="assistant", content="a", created_at=at
            )
            session.add_all([question, answer])
            session.flush()
            session.add(
                EvalQuestion(
                    question=f"{name} question",
                    conversation=[{"role": "user", "content": f"{name} earlier"}],
                    source="conversation",
                    message_id=answer.id,
                    created_at=at,
                )
            )
            kept[name] = answer.id
        session.commit()
    report = run_retention(db.sessions, RetentionPolicy(days=30), now=NOW)
    assert report.removed["eval_questions.question"] == 1
    with db.sessions() as session:
        left = {row.message_id: row.question for row in session.scalars(select(EvalQuestion))}
    assert left == {kept["recent"]: "recent question"}


def test_a_request_for_a_person_is_members_words_and_still_counts_after_erasure(
    db: Database,
) -> None:
    """Retention removes a handoff's message and the payload the helpdesk was sent (the
    conversation's words, the member's name); an erasure moves the handoff to the pseudonym
    with the conversation, so resolution and entry performance still count it."""
    old = NOW - timedelta(days=40)
    with db.sessions() as session:
        user, _ = create_user(session, "asker")
        kept, _ = create_user(session, "erased-later")
        conversations = []
        for owner in (user, kept):
            conversation = Conversation(user_id=owner.id, title="t", created_at=old, updated_at=old)
            session.add(conversation)
            session.flush()
            conversations.append(conversation)
        session.commit()
        for conversation in conversations:
            create_handoff(
                session,
                conversation,
                handoff_id=str(uuid.uuid4()),
                message="Please call me on +49 170 1234567",
                payload={"member": {"name": "Jane Doe"}, "turns": [{"question": "my order"}]},
                now=old,
            )
        kept_id = kept.id
    report = run_retention(db.sessions, RetentionPolicy(days=30), now=NOW)
    assert report.removed["handoffs.message"] == 2 and report.removed["handoffs.payload"] == 2
    with db.sessions() as session:
        assert session.scalars(select(Handoff.message)).all() == [None, None]
        assert session.scalars(select(Handoff.payload)).all() == [None, None]
        request = request_erasure(session, kept_id, requested_by="cli:ops", now=NOW, audit=_line(0))
    done = carry_out(db.sessions, request.id, clock=lambda: NOW)
    assert done.receipt["kept"]["handoffs"] == 1
    with db.sessions() as session:
        assert session.scalar(select(func.count()).select_from(Handoff)) == 2
        owners = {u.name for u in session.scalars(select(User).join(Handoff))}
        assert "asker" in owners and any(n.startswith("erased-") for n in owners)


def test_a_span_left_by_an_earlier_run_goes_at_the_next_and_only_the_span(db: Database) -> None:
    """A conversation whose words an earlier run removed while each source's ``span`` (the
    answer's sentence that cited it) stayed is found again: the next run removes the spans,
    keeps the rest of each source (what the rollups read), and the one after finds nothing."""
    old = NOW - timedelta(days=40)
    sources = [
        {"n": 1, "card_id": "k0", "title": "Refunds", "span": "My refund for order 77 [1]."},
        {"n": 2, "card_id": "k1", "title": "Labels", "span": None, "source_url": "https://x/k1"},
        "not a source",
    ]
    with db.sessions() as session:
        user, _ = create_user(session, "spanned")
        conversation = Conversation(
            user_id=user.id, title="(removed)", created_at=old, updated_at=old
        )
        session.add(conversation)
        session.flush()
        session.add_all(
            [
                Message(
                    conversation_id=conversation.id,
                    seq=1,
                    role="user",
                    content="",
                    created_at=old,
                    content_removed_at=old,
                ),
                Message(
                    conversation_id=conversation.id,
                    seq=2,
                    role="assistant",
                    content="",
                    sources=sources,
                    created_at=old,
                    content_removed_at=old,
                ),
            ]
        )
        session.commit()
        conversation_id = conversation.id
    policy = RetentionPolicy(days=30)
    report = run_retention(db.sessions, policy, now=NOW)
    assert report.conversations == 1 and report.removed["messages.sources.span"] == 1
    with db.sessions() as session:
        (stored,) = session.scalars(
            select(Message.sources).where(
                Message.conversation_id == conversation_id, Message.role == "assistant"
            )
        ).all()
    assert stored == [
        {"n": 1, "card_id": "k0", "title": "Refunds"},
        {"n": 2, "card_id": "k1", "title": "Labels", "source_url": "https://x/k1"},
        "not a source",
    ]
    assert run_retention(db.sessions, policy, now=NOW).conversations == 0


def test_removed_questions_say_why_on_the_gaps_and_feedback_reports(db: Database) -> None:
    """A question whose words retention removed is marked ``retention``, one of an erased
    member ``erasure``, a stored one not at all: the admin pages name the reason, not a
    blank."""
    old = NOW - timedelta(days=40)
    with db.sessions() as session:
        owners = [create_user(session, n)[0] for n in ("kept-words", "aged", "leaver")]
        owner_ids = [u.id for u in owners]
        for owner in owners:
            at = NOW if owner.name == "kept-words" else old
            conversation = Conversation(user_id=owner.id, title="q", created_at=at, updated_at=at)
            session.add(conversation)
            session.flush()
            answer = Message(
                conversation_id=conversation.id,
                seq=2,
                role="assistant",
                content="nothing",
                answer_status="not_found",
                support=0.1,
                created_at=at,
            )
            session.add_all(
                [
                    Message(
                        conversation_id=conversation.id,
                        seq=1,
                        role="user",
                        content=f"where is the office of {owner.name}",
                        created_at=at,
                    ),
                    answer,
                ]
            )
            session.flush()
            session.add(Feedback(message_id=answer.id, user_id=owner.id, rating="down"))
        session.commit()
    with db.sessions() as session:
        request = request_erasure(
            session, owner_ids[2], requested_by="cli:ops", now=NOW, audit=_line(0)
        )
    carry_out(db.sessions, request.id, clock=lambda: NOW)
    run_retention(db.sessions, RetentionPolicy(days=30), now=NOW)
    rule = GapRule(min_coverage=0.7, low_support=0.5)
    with db.sessions() as session:
        gaps = gap_questions(session, rule=rule)["gap"]
        worst = feedback_report(session, limit=10).worst
    by_words = sorted((q.question, q.removed) for q in gaps)
    assert by_words == [
        ("", "erasure"),
        ("", "retention"),
        ("where is the office of kept-words", None),
    ]
    assert sorted((a.question or "", a.removed) for a in worst) == by_words
