"""Members' feedback on answers: one thumbs up or down, with an optional comment, per member
per answer.

A member may rate the answers of their own conversations only (not one they deleted); any
other message id is the same ``NotFoundError`` whether it is unknown, a question, someone
else's or in a hidden conversation, so ids cannot be probed.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from citewall.errors import NotFoundError, UserError
from citewall.storage.conversations import get_conversation
from citewall.storage.db import begin_write
from citewall.storage.failures import storage_errors
from citewall.storage.models import RATINGS, Conversation, Feedback, Message, Rating
from citewall.storage.types import utcnow

#: The longest comment kept (characters, after trimming).
COMMENT_MAX_CHARS = 2000


def _not_found(message_id: object) -> NotFoundError:
    return NotFoundError(f"answer {str(message_id)[:100]!r} not found")


def own_answer(session: Session, message_id: str, user_id: int) -> Message:
    """The assistant message ``message_id`` if it is in ``user_id``'s own, shown conversation.

    ``NotFoundError`` (one message for every other case) otherwise.
    """
    if not isinstance(message_id, str) or len(message_id) > 36:
        raise _not_found(message_id)
    with storage_errors(session, "reading an answer"):
        message = session.get(Message, message_id)
    if message is None or message.role != "assistant":
        raise _not_found(message_id)
    try:
        get_conversation(session, message.conversation_id, user_id)
    except NotFoundError:
        raise _not_found(message_id) from None
    return message


def clean_comment(comment: str | None) -> str | None:
    """A comment as stored: trimmed, ``None`` when empty; ``UserError`` when over the limit.

    >>> clean_comment("  too slow  "), clean_comment("   ")
    ('too slow', None)
    """
    if comment is None:
        return None
    trimmed = comment.strip()
    if len(trimmed) > COMMENT_MAX_CHARS:
        raise UserError(f"a comment has at most {COMMENT_MAX_CHARS} characters, got {len(trimmed)}")
    return trimmed or None


def put_feedback(
    session: Session,
    *,
    message_id: str,
    user_id: int,
    rating: Rating,
    comment: str | None,
    now: datetime | None = None,
) -> Feedback:
    """Store ``user_id``'s rating of the answer ``message_id``, replacing an earlier one."""
    if rating not in RATINGS:
        raise UserError(f"rating must be one of {', '.join(RATINGS)}, got {rating!r}")
    comment = clean_comment(comment)
    message = own_answer(session, message_id, user_id)
    now = now if now is not None else utcnow()
    with storage_errors(session, "saving feedback", catch_all=True):
        begin_write(session)
        # Row lock on PostgreSQL (SQLite's write lock is held already): two PUTs for one answer
        # update in turn instead of both inserting.
        session.execute(
            select(Conversation.id)
            .where(Conversation.id == message.conversation_id)
            .with_for_update()
        )
        row = session.scalar(
            select(Feedback).where(Feedback.message_id == message.id, Feedback.user_id == user_id)
        )
        if row is None:
            row = Feedback(
                message_id=message.id,
                user_id=user_id,
                rating=rating,
                comment=comment,
                created_at=now,
                updated_at=now,
            )
            session.add(row)
        else:
            row.rating, row.comment, row.updated_at = rating, comment, now
        session.commit()
    return row


def delete_feedback(session: Session, *, message_id: str, user_id: int) -> None:
    """Withdraw ``user_id``'s rating of ``message_id`` (nothing to withdraw is fine)."""
    message = own_answer(session, message_id, user_id)
    with storage_errors(session, "deleting feedback", catch_all=True):
        session.execute(
            delete(Feedback).where(Feedback.message_id == message.id, Feedback.user_id == user_id)
        )
        session.commit()


def feedback_of(session: Session, message_ids: Iterable[str], user_id: int) -> dict[str, Feedback]:
    """``user_id``'s ratings of ``message_ids``, by message id."""
    ids = sorted(set(message_ids))
    if not ids:
        return {}
    with storage_errors(session, "reading feedback"):
        rows = session.scalars(
            select(Feedback).where(Feedback.message_id.in_(ids), Feedback.user_id == user_id)
        )
        return {row.message_id: row for row in rows}
