"""One chat turn: check the conversation, run the pipeline, persist everything in one go.

The answer is built first (nothing is written while the model works); then the user message,
the assistant message with its FULL sources, and the retrieval events are saved by
``storage.turns.save_turn`` in a single transaction. A failed save rolls back all of
it (a new conversation included) and raises ``StorageError``.

A regenerated turn (``plan_regeneration``) answers the conversation's last question again: it
stores a new answer only, which records the answer it replaced. The model's history holds the
latest answer to each question. The streamed path is ``chat.turn_stream``.

The member's exposure budget is decided by the turn's ``chat.budget.ExposureGate`` once the
context is retrieved (a reservation, settled by the save). A conversation the member deleted
while the turn ran still takes it (``save_turn``): what the member was shown is recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from citewall.chat.budget import ExposureGate
from citewall.chat.pipeline import Answer, answer_question
from citewall.chat.titles import first_title, next_title
from citewall.errors import CitewallError, ConflictError, ConversationFullError, StorageError
from citewall.generation.protocols import Turn
from citewall.kb.audiences import Viewer
from citewall.runtime import Runtime
from citewall.storage import conversations, turns
from citewall.storage.models import Message, new_uuid
from citewall.storage.turns import NewConversation, Retitle, TurnRecord
from citewall.text.question import CleanQuestion


@dataclass(frozen=True, slots=True)
class TurnPlan:
    """What a turn needs before the pipeline runs: where to save and the prior turns."""

    conversation_id: str
    is_new: bool
    title: str
    #: The question to answer (for a regeneration, the stored last question).
    question: CleanQuestion
    history: tuple[Turn, ...]
    #: The answer a regeneration replaces (None: a new question).
    regenerates: str | None = None
    #: The title this question gives a conversation no question had named yet (None: keep).
    retitle: str | None = None

    @property
    def title_after(self) -> str:
        """The conversation's title once the turn is saved."""
        return self.retitle if self.retitle is not None else self.title


@dataclass(frozen=True, slots=True)
class TurnResult:
    """A persisted turn: the stored assistant message and the pipeline's answer."""

    conversation_id: str
    message_id: str
    created_at: datetime
    answer: Answer
    #: The conversation's title once the turn was saved.
    title: str
    #: The first turn of the window the member's exposure budget restricted (the admin alert).
    alert: bool = False


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
    question: CleanQuestion,
    conversation_id: str | None,
    max_conversation_messages: int,
) -> TurnPlan:
    """Check the conversation (owner, room for two more messages) and load its history.

    Raises ``NotFoundError`` for an unknown conversation, another user's or one its member
    deleted, and ``ConversationFullError`` when the conversation is at its length limit.
    """
    try:
        if conversation_id is None:
            return TurnPlan(new_uuid(), True, first_title(question), question, ())
        conversation = conversations.get_conversation(session, conversation_id, user_id)
        messages = conversations.list_messages(session, conversation.id)
    except SQLAlchemyError as exc:
        raise StorageError("could not read the conversation") from exc
    check_conversation_room(len(messages), max_conversation_messages)
    return TurnPlan(
        str(conversation.id),
        False,
        conversation.title,
        question,
        history_turns(messages),
        retitle=next_title(conversation.title, question),
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
        # Stored as it was cleaned when it entered (``text.question``): not cleaned again.
        CleanQuestion(question.content),
        history_turns(earlier),
        regenerates=str(answer.id),
    )


def prepare_turn(
    runtime: Runtime, *, user_id: int, question: CleanQuestion, conversation_id: str | None
) -> TurnPlan:
    """``plan_turn`` in its own session."""
    with runtime.session_factory() as session:
        return plan_turn(
            session,
            user_id=user_id,
            question=question,
            conversation_id=conversation_id,
            max_conversation_messages=runtime.settings.max_conversation_messages,
        )


def prepare_regeneration(runtime: Runtime, *, user_id: int, conversation_id: str) -> TurnPlan:
    """``plan_regeneration`` in its own session."""
    with runtime.session_factory() as session:
        return plan_regeneration(
            session,
            user_id=user_id,
            conversation_id=conversation_id,
            max_conversation_messages=runtime.settings.max_conversation_messages,
        )


def persist_turn(
    session_factory: sessionmaker[Session],
    *,
    user_id: int,
    plan: TurnPlan,
    answer: Answer,
    gate: ExposureGate,
    now: datetime | None = None,
) -> TurnResult:
    """Save the question, the answer (FULL sources, markers kept), the retrieval events and
    the exposure rows, settling ``gate``'s reservation.

    One transaction: a new conversation row is created in it too, so a failure leaves nothing.
    A regeneration saves the answer only (the question is stored already).
    """
    record = TurnRecord(
        conversation_id=plan.conversation_id,
        question=plan.question,
        answer=answer,
        new_conversation=NewConversation(user_id, plan.title) if plan.is_new else None,
        retitle=Retitle(plan.title, plan.retitle) if plan.retitle is not None else None,
        regenerated_from=plan.regenerates,
        owner=user_id,
        settles=gate.settles,
    )
    with session_factory() as session:
        try:
            _, assistant = turns.save_turn(session, record, now=now)
        except SQLAlchemyError as exc:
            session.rollback()
            raise StorageError("could not save the turn; nothing was stored") from exc
        except CitewallError:
            session.rollback()
            raise
        return TurnResult(
            plan.conversation_id,
            str(assistant.id),
            assistant.created_at,
            answer,
            plan.title_after,
            gate.alert,
        )


def run_turn(
    runtime: Runtime,
    *,
    user_id: int,
    viewer: Viewer,
    question: CleanQuestion,
    conversation_id: str | None,
) -> TurnResult:
    """Plan, answer and persist one turn (the non-streaming path). Nothing reaches the member
    unless the turn is stored, so a failure releases the turn's exposure reservation."""
    plan = prepare_turn(
        runtime, user_id=user_id, question=question, conversation_id=conversation_id
    )
    gate = ExposureGate.of(runtime, user_id)
    try:
        answer = answer_question(
            plan.question,
            retriever=runtime.retriever,
            generator=runtime.generator,
            embedder=runtime.embedder,
            viewer=viewer,
            history=plan.history,
            policy=runtime.answer_policy(),
            admit=gate.admit,
        )
        return persist_turn(
            runtime.session_factory,
            user_id=user_id,
            plan=plan,
            answer=answer,
            gate=gate,
            now=runtime.clock(),
        )
    except CitewallError:
        gate.release()
        raise


def preview_answer(runtime: Runtime, *, viewer: Viewer, question: CleanQuestion) -> Answer:
    """The answer ``viewer`` would get to a first question, through the real pipeline with the
    runtime's policy, storing nothing (no conversation, no exposure: the admin preview)."""
    return answer_question(
        question,
        retriever=runtime.retriever,
        generator=runtime.generator,
        embedder=runtime.embedder,
        viewer=viewer,
        policy=runtime.answer_policy(),
    )
