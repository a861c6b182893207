"""A member's request for a person, stored: the payload built from the conversation as it
stands, committed with the handoff before any delivery (``storage.handoffs``)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from citewall.config import Settings
from citewall.errors import ConflictError
from citewall.handoff.payload import build_payload
from citewall.storage import conversations, feedback, handoffs
from citewall.storage.models import Handoff, User, new_uuid


def request_handoff(
    session: Session,
    settings: Settings,
    *,
    member: User,
    conversation_id: str,
    message: str | None,
    now: datetime,
) -> tuple[Handoff, bool]:
    """Store ``member``'s request for a person on their own conversation ``conversation_id``.

    ``NotFoundError`` unless the conversation is theirs (and not deleted); ``UserError`` for a
    message over the limit; ``ConflictError`` when no helpdesk is configured. ``(handoff,
    created)``: ``created`` is False when the conversation had not moved on since its last one.
    """
    conversation = conversations.get_conversation(session, conversation_id, member.id)
    clean = handoffs.clean_message(message)
    if not settings.handoff:
        raise ConflictError("handoff to a person is not configured on this server")
    messages = conversations.list_messages(session, conversation.id)
    ratings = feedback.feedback_of(
        session, (str(m.id) for m in messages if m.role == "assistant"), member.id
    )
    handoff_id = new_uuid()
    payload = build_payload(
        handoff_id=handoff_id,
        conversation=conversation,
        member=member,
        messages=messages,
        ratings=ratings,
        message=clean,
        requested_at=now,
        include_internal=settings.handoff_include_internal,
        public_url=settings.public_url,
    )
    return handoffs.create_handoff(
        session,
        conversation,
        handoff_id=handoff_id,
        message=clean,
        payload=payload.model_dump(mode="json"),
        now=now,
    )
