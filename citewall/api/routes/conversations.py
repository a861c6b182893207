"""A member's own conversations: the list and the history reload (prose and external only)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from citewall.api.deps import CurrentUser, SessionDep
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.schemas import (
    MAX_OFFSET,
    ConversationPublic,
    ConversationSummaryPublic,
    MessagePublic,
)
from citewall.boundary.external import external_sources_only
from citewall.boundary.prose import prose_only
from citewall.storage import conversations
from citewall.storage.models import AnswerStatus, Message

router = APIRouter(
    prefix="/api/v1", tags=["conversations"], responses=error_responses(*AUTHENTICATED, 404)
)


def served_status(message: Message) -> AnswerStatus:
    """The stored answer status; ``answered`` for rows from before statuses were stored (and
    for a value no version wrote)."""
    return "not_found" if message.answer_status == "not_found" else "answered"


def public_message(message: Message) -> MessagePublic:
    """A stored message as a member sees it: markers stripped, external sources only."""
    assistant = message.role == "assistant"
    return MessagePublic(
        id=str(message.id),
        role="assistant" if assistant else "user",
        content=prose_only(message.content) if assistant else message.content,
        answer_status=served_status(message) if assistant else None,
        # Serve boundary (ADR external-only): history reload is a member path too.
        sources=(
            external_sources_only(message.sources or [], hybrid_path=message.hybrid_path)
            if assistant
            else []
        ),
        hybrid_path=message.hybrid_path if assistant else None,
        created_at=message.created_at,
    )


@router.get("/conversations", response_model=list[ConversationSummaryPublic])
def list_own_conversations(
    session: SessionDep,
    user: CurrentUser,
    limit: int = Query(50, ge=1, le=200),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
) -> Any:
    """Your conversations, most recently updated first."""
    return [
        ConversationSummaryPublic.model_validate(s, from_attributes=True)
        for s in conversations.list_conversations(session, user.id, limit=limit, offset=offset)
    ]


@router.get("/conversations/{conversation_id}", response_model=ConversationPublic)
def get_own_conversation(conversation_id: str, session: SessionDep, user: CurrentUser) -> Any:
    """Reload a conversation. Another member's or an unknown id answers 404."""
    conversation = conversations.get_conversation(session, conversation_id, user.id)
    messages = conversations.list_messages(session, conversation.id)
    return ConversationPublic(
        id=str(conversation.id),
        title=conversation.title,
        created_at=conversation.created_at,
        messages=[public_message(m) for m in messages],
    )
