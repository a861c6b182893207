"""A member's own conversations: the list (with search), the history reload (prose and external
only), rename, and delete (hidden from the member, kept for admins and analytics)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import APIRouter, Query, Response
from sqlalchemy.orm import Session

from citewall.api.deps import CurrentUser, CurrentViewer, SessionDep
from citewall.api.json_body import StrictJsonRoute
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.schemas import (
    MAX_OFFSET,
    ConversationPublic,
    ConversationRename,
    ConversationSummaryPublic,
    FeedbackPublic,
    MessagePublic,
)
from citewall.boundary.audience import still_allowed
from citewall.boundary.external import external_sources_only
from citewall.boundary.prose import prose_only
from citewall.kb.audiences import CardFilter, Viewer, retrievable_for
from citewall.storage import cards, conversations, feedback
from citewall.storage.models import ANSWER_STATUSES, AnswerStatus, Feedback, Message
from citewall.storage.sources import readable_sources

router = APIRouter(
    prefix="/api/v1",
    tags=["conversations"],
    responses=error_responses(*AUTHENTICATED, 404),
    route_class=StrictJsonRoute,
)


def served_status(message: Message) -> AnswerStatus:
    """The stored answer status; ``answered`` for rows from before statuses were stored (and
    for a value no version wrote)."""
    status = message.answer_status
    return status if status is not None and status in ANSWER_STATUSES else "answered"


def public_feedback(row: Feedback) -> FeedbackPublic:
    return FeedbackPublic(
        message_id=str(row.message_id),
        rating=row.rating,
        comment=row.comment,
        updated_at=row.updated_at,
    )


def public_message(
    message: Message,
    rating: Feedback | None = None,
    *,
    allowed: CardFilter,
    current: Mapping[str, Sequence[str]],
) -> MessagePublic:
    """A stored message as a member sees it: markers stripped, external sources only and of
    the cards ``allowed`` still lets them see (``current``: the catalogue's audiences now), with
    the member's own rating of it."""
    assistant = message.role == "assistant"
    return MessagePublic(
        id=str(message.id),
        role="assistant" if assistant else "user",
        content=prose_only(message.content) if assistant else message.content,
        answer_status=served_status(message) if assistant else None,
        # Serve boundary (decision 0002): history reload is a member path too.
        sources=(
            external_sources_only(
                still_allowed(readable_sources(message.sources), cards=allowed, current=current),
                hybrid_path=message.hybrid_path,
            )
            if assistant
            else []
        ),
        hybrid_path=message.hybrid_path if assistant else None,
        feedback=public_feedback(rating) if assistant and rating is not None else None,
        regenerated_from=message.regenerated_from if assistant else None,
        created_at=message.created_at,
    )


def _summary(summary: conversations.ConversationSummary) -> ConversationSummaryPublic:
    return ConversationSummaryPublic.model_validate(summary, from_attributes=True)


@router.get("/conversations", response_model=list[ConversationSummaryPublic])
def list_own_conversations(
    session: SessionDep,
    user: CurrentUser,
    limit: int = Query(50, ge=1, le=200),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
    q: str | None = Query(
        None,
        max_length=200,
        description="Only conversations whose title or one of your questions contains this "
        "text (ignoring case).",
    ),
) -> Any:
    """Your conversations, most recently updated first (deleted ones are never listed)."""
    return [
        _summary(s)
        for s in conversations.list_conversations(
            session, user.id, limit=limit, offset=offset, query=q.strip() if q else None
        )
    ]


@router.get("/conversations/{conversation_id}", response_model=ConversationPublic)
def get_own_conversation(
    conversation_id: str, session: SessionDep, user: CurrentUser, viewer: CurrentViewer
) -> Any:
    """Reload a conversation. Another member's, a deleted or an unknown id answers 404. A
    source whose card is outside the member's audiences today is not served."""
    return member_conversation(session, conversation_id, user.id, viewer)


def member_conversation(
    session: Session, conversation_id: str, user_id: int, viewer: Viewer
) -> ConversationPublic:
    """One of ``user_id``'s shown conversations as they see it (the reload, the export): a
    source whose card is outside ``viewer``'s audiences today is not served."""
    conversation = conversations.get_conversation(session, conversation_id, user_id)
    messages = conversations.list_messages(session, conversation.id)
    ratings = feedback.feedback_of(
        session, (str(m.id) for m in messages if m.role == "assistant"), user_id
    )
    allowed = retrievable_for(viewer)
    current = (
        {}
        if allowed.everything
        else cards.card_audiences(
            session,
            (
                s.card_id
                for m in messages
                if m.role == "assistant"
                for s in readable_sources(m.sources)
            ),
        )
    )
    return ConversationPublic(
        id=str(conversation.id),
        title=conversation.title,
        created_at=conversation.created_at,
        messages=[
            public_message(m, ratings.get(str(m.id)), allowed=allowed, current=current)
            for m in messages
        ],
    )


@router.patch(
    "/conversations/{conversation_id}",
    response_model=ConversationSummaryPublic,
    responses=error_responses(400),
)
def rename_own_conversation(
    conversation_id: str, body: ConversationRename, session: SessionDep, user: CurrentUser
) -> Any:
    """Rename a conversation (1 to 200 characters once trimmed). The list order stays."""
    return _summary(
        conversations.rename_conversation(session, conversation_id, user.id, body.title)
    )


@router.delete("/conversations/{conversation_id}", status_code=204, response_class=Response)
def delete_own_conversation(
    conversation_id: str, session: SessionDep, user: CurrentUser
) -> Response:
    """Delete a conversation from your list: it answers 404 to you from then on. Its turns
    stay stored for admins, analytics and the exposure budget."""
    conversations.hide_conversation(session, conversation_id, user.id)
    return Response(status_code=204)
