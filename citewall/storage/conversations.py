"""Conversations and their messages: a member's list (with search), rename and delete, and
reading a conversation's messages and retrieval events. Saving a turn is ``storage.turns``.

Deleting hides: the conversation becomes unknown to its member (the same 404 as another
member's), while its turns, events and exposures stay for admins, analytics and the exposure
budget.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from citewall.errors import NotFoundError, UserError
from citewall.storage.failures import storage_errors
from citewall.storage.matching import contains_text
from citewall.storage.models import Conversation, Feedback, Message, RetrievalEvent, User
from citewall.storage.paging import check_page
from citewall.storage.types import utcnow

TITLE_MAX_CHARS = 200


def short_title(text: str, max_chars: int = TITLE_MAX_CHARS) -> str:
    """``text`` as a title of at most ``max_chars`` characters: whitespace collapsed, a longer
    one cut at a word (inside one long word, at the limit) and ended with "…"; "Untitled" when
    nothing is left.

    >>> short_title("  How   long   do refunds take? ")
    'How long do refunds take?'
    >>> short_title("word " * 10, 12)
    'word word…'
    """
    flat = " ".join(text.split()) or "Untitled"
    if len(flat) <= max_chars:
        return flat
    cut = flat[: max_chars - 1]
    if flat[max_chars - 1] != " " and " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip() + "…"


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    """A conversation in a listing, with its owner's name and its message count."""

    id: str
    user_id: int
    user_name: str
    title: str
    created_at: datetime
    updated_at: datetime
    message_count: int
    #: When its member deleted it (listed for admins only).
    hidden_at: datetime | None = None
    #: Its answers that said the knowledge base does not answer the question.
    not_found_answers: int = 0
    #: Its answers the member rated "Helpful" and "Not helpful".
    rated_up: int = 0
    rated_down: int = 0


def not_found(conversation_id: object) -> NotFoundError:
    # One message whether the id is malformed, unknown or someone else's: ids cannot be probed.
    shown = str(conversation_id)[:100]
    return NotFoundError(f"conversation {shown!r} not found")


def _is_canonical_uuid(value: str) -> bool:
    try:
        return str(uuid.UUID(value)) == value
    except (ValueError, TypeError, AttributeError):
        return False


def get_conversation(session: Session, conversation_id: str, user_id: int | None) -> Conversation:
    """The conversation, if ``user_id`` owns it and has not deleted it (``None`` = an admin: any
    conversation, hidden ones included).

    ``NotFoundError`` with the same message for a malformed id, an unknown id, another user's
    conversation and one its member deleted.
    """
    if not isinstance(conversation_id, str) or not _is_canonical_uuid(conversation_id):
        raise not_found(conversation_id)
    with storage_errors(session, "reading a conversation"):
        conversation = session.get(Conversation, conversation_id)
    if conversation is None:
        raise not_found(conversation_id)
    if user_id is not None and (conversation.user_id != user_id or conversation.hidden_at):
        raise not_found(conversation_id)
    return conversation


def _summaries(
    session: Session, conditions: Sequence[ColumnElement[bool]], limit: int, offset: int
) -> list[ConversationSummary]:
    """Conversations matching ``conditions``, most recently updated first, each with its
    owner's name, message count, not-found answers and ratings (one query)."""
    counts = (
        select(func.count(Message.id))
        .where(Message.conversation_id == Conversation.id)
        .correlate(Conversation)
        .scalar_subquery()
    )
    not_found_answers = (
        select(func.count(Message.id))
        .where(Message.conversation_id == Conversation.id, Message.answer_status == "not_found")
        .correlate(Conversation)
        .scalar_subquery()
    )

    def rated(rating: str) -> ColumnElement[int]:
        return (
            select(func.count(Feedback.id))
            .join(Message, Message.id == Feedback.message_id)
            .where(Message.conversation_id == Conversation.id, Feedback.rating == rating)
            .correlate(Conversation)
            .scalar_subquery()
        )

    query = (
        select(Conversation, User.name, counts, not_found_answers, rated("up"), rated("down"))
        .join(User, User.id == Conversation.user_id)
        .where(*conditions)
        .order_by(Conversation.updated_at.desc(), Conversation.id.desc())
        .limit(limit)
        .offset(offset)
    )
    with storage_errors(session, "listing conversations"):
        rows = session.execute(query).all()
    return [
        ConversationSummary(
            id=str(c.id),
            user_id=c.user_id,
            user_name=name,
            title=c.title,
            created_at=c.created_at,
            updated_at=c.updated_at,
            message_count=int(n or 0),
            hidden_at=c.hidden_at,
            not_found_answers=int(missing or 0),
            rated_up=int(up or 0),
            rated_down=int(down or 0),
        )
        for c, name, n, missing, up, down in rows
    ]


def list_conversations(
    session: Session,
    user_id: int | None,
    limit: int = 50,
    offset: int = 0,
    *,
    query: str | None = None,
) -> list[ConversationSummary]:
    """Conversations of ``user_id`` (``None`` = everyone's, hidden ones included), most recently
    updated first. A member's list leaves out the conversations they deleted.

    ``query`` keeps the conversations whose title or one of whose questions contains it,
    ignoring case (``storage.matching``).
    """
    check_page(limit, offset)
    conditions: list[ColumnElement[bool]] = []
    if user_id is not None:
        conditions += [Conversation.user_id == user_id, Conversation.hidden_at.is_(None)]
    if query:
        asked = (
            select(Message.id)
            .where(
                Message.conversation_id == Conversation.id,
                Message.role == "user",
                contains_text(Message.content, query),
            )
            .correlate(Conversation)
            .exists()
        )
        conditions.append(or_(contains_text(Conversation.title, query), asked))
    return _summaries(session, conditions, limit, offset)


def summarise(session: Session, conversation: Conversation) -> ConversationSummary:
    """One conversation as a listing shows it."""
    (summary,) = _summaries(session, [Conversation.id == conversation.id], 1, 0)
    return summary


def rename_conversation(
    session: Session, conversation_id: str, user_id: int, title: str
) -> ConversationSummary:
    """Give ``user_id``'s conversation a title of their own: whitespace collapsed, 1 to 200
    characters (else ``UserError``). Renaming is not activity: the list order stays."""
    clean = " ".join(title.split())
    if not 1 <= len(clean) <= TITLE_MAX_CHARS:
        raise UserError(
            f"a title has 1 to {TITLE_MAX_CHARS} characters once trimmed, got {len(clean)}"
        )
    conversation = get_conversation(session, conversation_id, user_id)
    with storage_errors(session, "renaming a conversation", catch_all=True):
        conversation.title = clean
        session.commit()
    return summarise(session, conversation)


def hide_conversation(
    session: Session, conversation_id: str, user_id: int, now: datetime | None = None
) -> None:
    """Delete ``user_id``'s conversation from their view: unknown to them from now on (404),
    while its turns, retrieval events and exposures stay stored for admins and analytics."""
    conversation = get_conversation(session, conversation_id, user_id)
    with storage_errors(session, "deleting a conversation", catch_all=True):
        conversation.hidden_at = now if now is not None else utcnow()
        session.commit()


def list_messages(session: Session, conversation_id: str) -> list[Message]:
    """The conversation's messages in order (``seq`` ascending). Check ownership first."""
    with storage_errors(session, "reading messages"):
        return list(
            session.scalars(
                select(Message)
                .where(Message.conversation_id == conversation_id)
                .order_by(Message.seq)
            )
        )


def list_events(session: Session, message_id: str) -> list[RetrievalEvent]:
    """The retrieval events of one assistant message, best rank first."""
    with storage_errors(session, "reading retrieval events"):
        return list(
            session.scalars(
                select(RetrievalEvent)
                .where(RetrievalEvent.message_id == message_id)
                .order_by(RetrievalEvent.final_rank, RetrievalEvent.id)
            )
        )
