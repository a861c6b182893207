"""Member chat: one answer (JSON) or a stream (SSE), and answering the last question again
(SSE). Prose only, external sources only.

Every path passes sources through ``external_sources_only`` (decision 0002,
docs/decisions/0002-external-only-citations.md) and the answer through ``prose_only``
(``api.answer_stream.public_reply``); the stored message keeps markers and every source.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from citewall.api.answer_stream import answer_stream, public_reply, record_turn
from citewall.api.deps import CurrentUser, CurrentViewer, MetricsDep, RuntimeDep
from citewall.api.json_body import StrictJsonRoute
from citewall.api.limits import check_message_length
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.schemas import ChatRequest, ChatResponsePublic
from citewall.chat.turn import prepare_regeneration, prepare_turn, run_turn
from citewall.chat.turn_stream import TurnStream
from citewall.errors import CitewallError

router = APIRouter(
    prefix="/api/v1",
    tags=["chat"],
    responses=error_responses(*AUTHENTICATED, 400, 404, 409, 413, 502),
    route_class=StrictJsonRoute,
)


@router.post("/chat", response_model=ChatResponsePublic, summary="Ask a question")
def chat(
    body: ChatRequest,
    user: CurrentUser,
    viewer: CurrentViewer,
    runtime: RuntimeDep,
    metrics: MetricsDep,
) -> Any:
    """Answer ``message`` in a new or existing conversation and store the turn."""
    check_message_length(body.message, runtime.settings.max_message_chars)
    try:
        result = run_turn(
            runtime,
            user_id=user.id,
            viewer=viewer,
            question=body.message,
            conversation_id=body.conversation_id,
        )
    except CitewallError as exc:
        metrics.record_error(exc)
        raise
    record_turn(metrics, result)
    return public_reply(result)


#: How the two streaming routes are documented (the body is SSE, not JSON).
STREAM_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/event-stream": {}}, "description": "SSE events"}
}


@router.post(
    "/chat/stream",
    summary="Ask a question, streamed",
    response_class=StreamingResponse,
    responses=STREAM_RESPONSE,
)
def chat_stream(
    body: ChatRequest,
    user: CurrentUser,
    viewer: CurrentViewer,
    runtime: RuntimeDep,
    metrics: MetricsDep,
) -> StreamingResponse:
    """SSE: ``meta`` {conversation_id}, ``token`` {delta}..., then ``final`` or ``error``.

    Token deltas concatenate to marker-free prose. ``final`` carries the same fields as
    ``POST /api/v1/chat``. On ``error`` nothing of the turn was stored. Closing the connection
    stops the answer: the question and the prose said so far are stored as a ``stopped``
    answer (nothing when no prose was shown yet).
    """
    check_message_length(body.message, runtime.settings.max_message_chars)
    plan = prepare_turn(
        runtime, user_id=user.id, question=body.message, conversation_id=body.conversation_id
    )
    return answer_stream(TurnStream(runtime, user_id=user.id, viewer=viewer, plan=plan), metrics)


@router.post(
    "/conversations/{conversation_id}/regenerate",
    summary="Answer the last question again, streamed",
    response_class=StreamingResponse,
    responses=STREAM_RESPONSE,
)
def regenerate(
    conversation_id: str,
    user: CurrentUser,
    viewer: CurrentViewer,
    runtime: RuntimeDep,
    metrics: MetricsDep,
) -> StreamingResponse:
    """The same SSE stream as ``POST /api/v1/chat/stream``, answering the conversation's last
    question again. A new answer is stored (its ``regenerated_from`` is the answer it replaces,
    which stays in the history); no new question. 404 for an unknown conversation, 409 when it
    has no answered question.
    """
    plan = prepare_regeneration(runtime, user_id=user.id, conversation_id=conversation_id)
    return answer_stream(TurnStream(runtime, user_id=user.id, viewer=viewer, plan=plan), metrics)
