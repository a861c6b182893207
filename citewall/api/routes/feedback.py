"""A member's thumbs up or down (with an optional comment) on an answer of their own
conversations: one per answer, replaced by rating again, withdrawn by DELETE."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from citewall.api.deps import CurrentUser, SessionDep
from citewall.api.json_body import StrictJsonRoute
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.routes.conversations import public_feedback
from citewall.api.schemas import FeedbackPublic, FeedbackRequest
from citewall.storage import feedback

router = APIRouter(
    prefix="/api/v1",
    tags=["feedback"],
    responses=error_responses(*AUTHENTICATED, 404),
    route_class=StrictJsonRoute,
)


@router.put(
    "/messages/{message_id}/feedback",
    response_model=FeedbackPublic,
    responses=error_responses(400),
)
def rate_answer(
    message_id: str, body: FeedbackRequest, session: SessionDep, user: CurrentUser
) -> Any:
    """Rate an answer (``up`` or ``down``, optional comment), replacing your earlier rating.
    404 unless it is an answer in one of your own conversations (not a deleted one)."""
    row = feedback.put_feedback(
        session, message_id=message_id, user_id=user.id, rating=body.rating, comment=body.comment
    )
    return public_feedback(row)


@router.delete("/messages/{message_id}/feedback", status_code=204, response_class=Response)
def withdraw_rating(message_id: str, session: SessionDep, user: CurrentUser) -> Response:
    """Withdraw your rating of an answer (204 also when there was none)."""
    feedback.delete_feedback(session, message_id=message_id, user_id=user.id)
    return Response(status_code=204)
