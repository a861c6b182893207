"""Test questions admins save from production, and the questions file they export as.

"Save as test question" on a stored answer (a conversation turn, a knowledge gap, a rated
answer) keeps the member's question, the conversation before it, and what the answer should
have been: the cards that answer it, or ``unanswerable``. ``question_line`` is the line of
``citewall eval kb``'s questions file for one of them (docs/evaluation.md, "Evaluate your own
knowledge base"). Saving the same answer again replaces its question.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from citewall.errors import NotFoundError, UserError
from citewall.storage.audit import AuditEvent, entry_row
from citewall.storage.db import begin_write
from citewall.storage.failures import storage_errors
from citewall.storage.models import (
    EVAL_QUESTION_SOURCES,
    CardRow,
    EvalQuestion,
    EvalQuestionSource,
    Message,
)
from citewall.storage.types import utcnow

#: Bounds on what one saved question holds.
MAX_EXPECTED = 20
MAX_FACTS = 20
FACT_MAX_CHARS = 500


@dataclass(frozen=True, slots=True)
class AnsweredTurn:
    """A stored answer, the question it answers and the messages before that question."""

    answer: Message
    question: Message
    earlier: tuple[Message, ...]


@dataclass(frozen=True, slots=True)
class SavedAnswer:
    """What an admin said an answer should have been."""

    source: EvalQuestionSource
    expected: tuple[str, ...] = ()
    unanswerable: bool = False
    facts: tuple[str, ...] = ()


def answered_turn(session: Session, message_id: str) -> AnsweredTurn:
    """The answer ``message_id`` with its question and the conversation before it.
    ``NotFoundError`` unless it is a stored answer to a stored question."""
    missing = NotFoundError(f"answer {str(message_id)[:100]!r} not found")
    if len(message_id) > 36:
        raise missing
    with storage_errors(session, "reading an answer"):
        answer = session.get(Message, message_id)
        if answer is None or answer.role != "assistant":
            raise missing
        messages = list(
            session.scalars(
                select(Message)
                .where(Message.conversation_id == answer.conversation_id, Message.seq < answer.seq)
                .order_by(Message.seq)
            )
        )
    questions = [i for i, m in enumerate(messages) if m.role == "user"]
    if not questions:
        raise missing
    last = questions[-1]
    if not messages[last].content.strip():
        # Retention or an erasure removed the member's words: nothing left to ask again.
        raise UserError("this question was removed (retention or erasure): it cannot be saved")
    return AnsweredTurn(answer, messages[last], tuple(messages[:last]))


def _checked(saved: SavedAnswer, session: Session) -> SavedAnswer:
    if saved.source not in EVAL_QUESTION_SOURCES:
        raise UserError(f"source must be one of {', '.join(EVAL_QUESTION_SOURCES)}")
    expected = tuple(dict.fromkeys(c.strip() for c in saved.expected if c.strip()))
    if saved.unanswerable == bool(expected):
        raise UserError("pick the card(s) that should have answered, or mark it unanswerable")
    if len(expected) > MAX_EXPECTED:
        raise UserError(f"at most {MAX_EXPECTED} expected cards, got {len(expected)}")
    facts = tuple(f.strip() for f in saved.facts if f.strip())
    if saved.unanswerable and facts:
        raise UserError("an unanswerable question has no facts to state")
    if len(facts) > MAX_FACTS or any(len(f) > FACT_MAX_CHARS for f in facts):
        raise UserError(f"at most {MAX_FACTS} facts of {FACT_MAX_CHARS} characters each")
    with storage_errors(session, "reading the card catalogue"):
        known = set(session.scalars(select(CardRow.id).where(CardRow.id.in_(expected))))
    unknown = [c for c in expected if c not in known]
    if unknown:
        raise UserError(f"card {unknown[0][:200]!r} is not in the knowledge base")
    return SavedAnswer(saved.source, expected, saved.unanswerable, facts)


def save_eval_question(
    session: Session,
    turn: AnsweredTurn,
    conversation: Sequence[dict[str, str]],
    saved: SavedAnswer,
    *,
    admin_id: int,
    audit_event: AuditEvent,
    now: datetime | None = None,
) -> EvalQuestion:
    """Store (or replace) the test question of ``turn``'s answer, and append ``audit_event``
    in the same transaction (the question is a copy of a member's words). ``conversation`` is
    the history before the question as the pipeline reads it (``chat.turn.history_turns``)."""
    saved = _checked(saved, session)
    now = now if now is not None else utcnow()
    with storage_errors(session, "saving a test question", catch_all=True):
        begin_write(session)
        row = session.scalar(
            select(EvalQuestion).where(EvalQuestion.message_id == turn.answer.id).with_for_update()
        )
        if row is None:
            row = EvalQuestion(message_id=turn.answer.id, created_at=now)
            session.add(row)
        row.question = turn.question.content
        row.conversation = [dict(m) for m in conversation]
        row.expected = list(saved.expected)
        row.unanswerable = saved.unanswerable
        row.facts = list(saved.facts)
        row.source = saved.source
        row.created_by = admin_id
        row.updated_at = now
        session.add(entry_row(audit_event, now))
        session.commit()
    return row


def list_eval_questions(session: Session) -> list[EvalQuestion]:
    """Every saved test question, oldest first."""
    with storage_errors(session, "listing test questions"):
        return list(session.scalars(select(EvalQuestion).order_by(EvalQuestion.id)))


def delete_eval_question(session: Session, question_id: int, audit_event: AuditEvent) -> None:
    """Remove a saved test question and append ``audit_event``, in one transaction;
    ``NotFoundError`` when there is none with that id."""
    with storage_errors(session, "deleting a test question", catch_all=True):
        row = session.get(EvalQuestion, question_id)
        if row is None:
            raise NotFoundError(f"test question {question_id} not found")
        session.delete(row)
        session.add(entry_row(audit_event, utcnow()))
        session.commit()


def question_line(row: EvalQuestion) -> dict[str, Any]:
    """The questions-file line of a saved question (``id`` ``saved-<n>``).

    >>> question_line(EvalQuestion(id=3, question="Mars?", unanswerable=True, expected=[],
    ...     facts=[], conversation=[]))
    {'id': 'saved-3', 'question': 'Mars?', 'unanswerable': True}
    """
    line: dict[str, Any] = {"id": f"saved-{row.id}", "question": row.question}
    if row.unanswerable:
        line["unanswerable"] = True
    else:
        line["expected"] = list(row.expected)
    if row.facts:
        line["facts"] = list(row.facts)
    if row.conversation:
        line["conversation"] = [
            {"role": m["role"], "content": m["content"]} for m in row.conversation
        ]
    return line
