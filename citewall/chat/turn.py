"""One chat turn: check the conversation, run the pipeline, persist everything in one go.

The answer is built first (nothing is written while the model works); then the user message,
the assistant message with its FULL sources, and the retrieval events are saved by
``storage.turns.save_turn`` in a single transaction. A failed save rolls back all of
it (a new conversation included) and raises ``StorageError``.

A regenerated turn (``plan_regeneration``) answers the conversation's last question again: it
stores a new answer only, which records the answer it replaced. The model's history holds the
latest answer to each question. The streamed path is ``chat.turn_stream``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from citewall.chat.exposure import Budget, VerbatimCap
from citewall.chat.pipeline import Answer, AnswerPolicy, answer_question, clean_question
from citewall.errors import CitewallError, ConflictError, ConversationFullError, StorageError
from citewall.generation.protocols import Turn
from citewall.runtime import Runtime
from citewall.storage import conversations, exposure, turns
from citewall.storage.models import Message, Restriction, new_uuid
from citewall.storage.turns import NewConversation

log = logging.getLogger("citewall.exposure")

#: Conversation titles are the first words of the first question.
TITLE_CHARS = 80


@dataclass(frozen=True, slots=True)
class TurnPlan:
    """What a turn needs before the pipeline runs: where to save and the prior turns, and
    whether the member's exposure budget limits it to external cards (``alert``: this is the
    first such turn of the window, the one admins are told about)."""

    conversation_id: str
    is_new: bool
    title: str
    #: The question to answer (cleaned; for a regeneration, the stored last question).
    question: str
    history: tuple[Turn, ...]
    restricted: Restriction | None = None
    alert: bool = False
    #: The answer a regeneration replaces (None: a new question).
    regenerates: str | None = None


@dataclass(frozen=True, slots=True)
class TurnResult:
    """A persisted turn: the stored assistant message and the pipeline's answer."""

    conversation_id: str
    message_id: str
    created_at: datetime
    answer: Answer
    #: The member's exposure budget was spent with this turn's window (see ``TurnPlan``).
    alert: bool = False


def title_from(question: str) -> str:
    """A short conversation title from the first question (whitespace collapsed)."""
    flat = " ".join(question.split())
    if len(flat) <= TITLE_CHARS:
        return flat
    return flat[:TITLE_CHARS].rsplit(" ", 1)[0] + "…"


def history_turns(messages: Sequence[Message]) -> tuple[Turn, ...]:
    """Stored messages (oldest first) as generator history; content keeps its markers. Of the
    answers to one question (regenerated ones), only the latest is history.

    >>> [t.content for t in history_turns([Message(role="user", content="Q"),
    ...     Message(role="assistant", content="A1"), Message(role="assistant", content="A2")])]
    ['Q', 'A2']
    """
    turns: list[Turn] = []
    for m in messages:
        if m.role == "user":
            turns.append(Turn(role="user", content=m.content))
        elif m.role == "assistant":
            if turns and turns[-1].role == "assistant":
                turns.pop()  # a later answer to the same question replaced it
            turns.append(Turn(role="assistant", content=m.content))
    return tuple(turns)


def budget_of(runtime: Runtime) -> Budget | None:
    """The exposure budget the settings ask for (None: off)."""
    s = runtime.settings
    return Budget.of(s.exposure_budget_cards, s.exposure_window_hours)


def answer_policy(runtime: Runtime, restricted: Restriction | None = None) -> AnswerPolicy:
    """The runtime's condensation, answerability and corpus protection, as the pipeline takes
    them; ``restricted`` limits the turn to external cards."""
    s = runtime.settings
    cap = (
        VerbatimCap(max_sentences=s.max_internal_sentences, span_words=s.verbatim_span_words)
        if s.max_internal_sentences > 0
        else None
    )
    return AnswerPolicy(
        condenser=runtime.condenser,
        thresholds=runtime.thresholds,
        cap=cap,
        span_words=s.verbatim_span_words,
        restricted=restricted,
    )


def budget_state(
    session: Session, *, user_id: int, budget: Budget | None, now: datetime
) -> tuple[Restriction | None, bool]:
    """Is ``user_id``'s exposure budget spent (the turn is restricted), and is this the first
    restricted turn of the window (the alert)?"""
    if budget is None:
        return None, False
    since = budget.since(now)
    if not budget.spent(exposure.exposed_cards(session, user_id, since)):
        return None, False
    alert = not exposure.restricted_since(session, user_id, since)
    if alert:
        log.warning(
            "exposure budget spent: user %s reached %d distinct internal cards within %s; "
            "answers use external cards only until the window moves on",
            user_id,
            budget.cards,
            budget.window,
        )
    return "exposure_budget", alert


def check_conversation_room(message_count: int, max_messages: int, adding: int = 2) -> None:
    """Raise ``ConversationFullError`` when ``adding`` more messages (a turn: 2; a regenerated
    answer: 1) would pass the limit."""
    if message_count + adding > max_messages:
        raise ConversationFullError(
            f"this conversation has {message_count} messages; the limit is {max_messages} "
            "(CITEWALL_MAX_CONVERSATION_MESSAGES). Start a new conversation."
        )


def plan_turn(
    session: Session,
    *,
    user_id: int,
    question: str,
    conversation_id: str | None,
    max_conversation_messages: int,
) -> TurnPlan:
    """Check the conversation (owner, room for two more messages) and load its history.

    Raises ``NotFoundError`` for an unknown conversation, another user's or one its member
    deleted, and ``ConversationFullError`` when the conversation is at its length limit.
    """
    question = clean_question(question)
    try:
        if conversation_id is None:
            return TurnPlan(new_uuid(), True, title_from(question), question, ())
        conversation = conversations.get_conversation(session, conversation_id, user_id)
        messages = conversations.list_messages(session, conversation.id)
    except SQLAlchemyError as exc:
        raise StorageError("could not read the conversation") from exc
    check_conversation_room(len(messages), max_conversation_messages)
    return TurnPlan(
        str(conversation.id), False, conversation.title, question, history_turns(messages)
    )


def plan_regeneration(
    session: Session, *, user_id: int, conversation_id: str, max_conversation_messages: int
) -> TurnPlan:
    """Plan answering the conversation's last question again: its history is what came before
    that question. ``NotFoundError`` as ``plan_turn``; ``ConflictError`` when the conversation
    has no answered question; ``ConversationFullError`` when one more message passes the limit.
    """
    try:
        conversation = conversations.get_conversation(session, conversation_id, user_id)
        messages = conversations.list_messages(session, conversation.id)
        question, answer = turns.latest_turn(session, conversation.id)
    except SQLAlchemyError as exc:
        raise StorageError("could not read the conversation") from exc
    if answer is None:
        raise ConflictError("this conversation has no answered question to answer again")
    check_conversation_room(len(messages), max_conversation_messages, adding=1)
    earlier = [m for m in messages if m.seq < question.seq]
    return TurnPlan(
        str(conversation.id),
        False,
        conversation.title,
        question.content,
        history_turns(earlier),
        regenerates=str(answer.id),
    )


def with_budget(runtime: Runtime, session: Session, plan: TurnPlan, user_id: int) -> TurnPlan:
    """``plan`` with the member's exposure budget applied."""
    restricted, alert = budget_state(
        session, user_id=user_id, budget=budget_of(runtime), now=runtime.clock()
    )
    return dataclasses.replace(plan, restricted=restricted, alert=alert)


def prepare_turn(
    runtime: Runtime, *, user_id: int, question: str, conversation_id: str | None
) -> TurnPlan:
    """``plan_turn`` in its own session, with the member's exposure budget applied."""
    with runtime.session_factory() as session:
        plan = plan_turn(
            session,
            user_id=user_id,
            question=question,
            conversation_id=conversation_id,
            max_conversation_messages=runtime.settings.max_conversation_messages,
        )
        return with_budget(runtime, session, plan, user_id)


def prepare_regeneration(runtime: Runtime, *, user_id: int, conversation_id: str) -> TurnPlan:
    """``plan_regeneration`` in its own session, with the member's exposure budget applied."""
    with runtime.session_factory() as session:
        plan = plan_regeneration(
            session,
            user_id=user_id,
            conversation_id=conversation_id,
            max_conversation_messages=runtime.settings.max_conversation_messages,
        )
        return with_budget(runtime, session, plan, user_id)


def persist_turn(
    session_factory: sessionmaker[Session],
    *,
    user_id: int,
    plan: TurnPlan,
    answer: Answer,
    now: datetime | None = None,
) -> TurnResult:
    """Save the question, the answer (FULL sources, markers kept) and the retrieval events.

    One transaction: a new conversation row is created in it too, so a failure leaves nothing.
    A regeneration saves the answer only (the question is stored already).
    """
    with session_factory() as session:
        try:
            _, assistant = turns.save_turn(
                session,
                conversation_id=plan.conversation_id,
                question=plan.question,
                answer_content=answer.content,
                sources=list(answer.sources),
                hybrid_path=answer.hybrid_path,
                timings=dict(answer.timings_ms),
                generator=answer.generator,
                dropped_markers=answer.dropped_markers,
                events=answer.events,
                new_conversation=NewConversation(user_id, plan.title) if plan.is_new else None,
                answer_status=answer.answer_status,
                support=answer.support,
                retrieval_query=answer.retrieval_query,
                exposures=answer.exposures,
                restricted=answer.restricted,
                regenerated_from=plan.regenerates,
                now=now,
            )
        except SQLAlchemyError as exc:
            session.rollback()
            raise StorageError("could not save the turn; nothing was stored") from exc
        except CitewallError:
            session.rollback()
            raise
        return TurnResult(
            plan.conversation_id, str(assistant.id), assistant.created_at, answer, plan.alert
        )


def run_turn(
    runtime: Runtime, *, user_id: int, question: str, conversation_id: str | None
) -> TurnResult:
    """Plan, answer and persist one turn (the non-streaming path)."""
    plan = prepare_turn(
        runtime, user_id=user_id, question=question, conversation_id=conversation_id
    )
    answer = answer_question(
        plan.question,
        retriever=runtime.retriever,
        generator=runtime.generator,
        embedder=runtime.embedder,
        history=plan.history,
        policy=answer_policy(runtime, plan.restricted),
    )
    return persist_turn(
        runtime.session_factory, user_id=user_id, plan=plan, answer=answer, now=runtime.clock()
    )
