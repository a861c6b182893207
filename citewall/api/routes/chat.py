"""Member chat: one answer (JSON) or a stream (SSE). Prose only, external sources only.

Both paths pass sources through ``external_sources_only`` (ADR external-only) and the answer
through ``prose_only``; the stored message keeps markers and every source.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from citewall.api.deps import CurrentUser, RuntimeDep
from citewall.api.errors import detail_for
from citewall.api.limits import check_message_length
from citewall.api.metrics import ApiMetrics
from citewall.api.prose_stream import ProseStream
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.schemas import ChatRequest, ChatResponsePublic
from citewall.api.sse import sse_event
from citewall.boundary.external import external_sources_only
from citewall.boundary.prose import prose_only
from citewall.chat.turn import TurnResult, prepare_turn, run_turn, stream_turn
from citewall.errors import CitewallError

log = logging.getLogger("citewall.api")
router = APIRouter(
    prefix="/api/v1",
    tags=["chat"],
    responses=error_responses(*AUTHENTICATED, 400, 404, 409, 413, 502),
)


def public_reply(result: TurnResult) -> ChatResponsePublic:
    """The member's view of a persisted turn."""
    answer = result.answer
    return ChatResponsePublic(
        conversation_id=result.conversation_id,
        message_id=result.message_id,
        answer=prose_only(answer.content),
        answer_status=answer.answer_status,
        # Serve boundary (ADR external-only): a member never receives an internal source.
        sources=external_sources_only(answer.sources, hybrid_path=answer.hybrid_path),
        hybrid_path=answer.hybrid_path,
        created_at=result.created_at,
    )


def _record(metrics: ApiMetrics, result: TurnResult) -> None:
    answer = result.answer
    metrics.record_answer(
        answer.hybrid_path, answer.dropped_markers, answer.context.rerank_over_budget
    )
    metrics.record_restriction(answer.restricted is not None, result.alert)


@router.post("/chat", response_model=ChatResponsePublic, summary="Ask a question")
def chat(body: ChatRequest, user: CurrentUser, runtime: RuntimeDep, request: Request) -> Any:
    """Answer ``message`` in a new or existing conversation and store the turn."""
    check_message_length(body.message, runtime.settings.max_message_chars)
    metrics: ApiMetrics = request.app.state.metrics
    try:
        result = run_turn(
            runtime, user_id=user.id, question=body.message, conversation_id=body.conversation_id
        )
    except CitewallError as exc:
        metrics.record_error(exc)
        raise
    _record(metrics, result)
    return public_reply(result)


@router.post(
    "/chat/stream",
    summary="Ask a question, streamed",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "SSE events"}},
)
def chat_stream(
    body: ChatRequest, user: CurrentUser, runtime: RuntimeDep, request: Request
) -> StreamingResponse:
    """SSE: ``meta`` {conversation_id}, ``token`` {delta}..., then ``final`` or ``error``.

    Token deltas concatenate to marker-free prose. ``final`` carries the same fields as
    ``POST /api/v1/chat``. On ``error`` nothing of the turn was stored.
    """
    check_message_length(body.message, runtime.settings.max_message_chars)
    plan = prepare_turn(
        runtime, user_id=user.id, question=body.message, conversation_id=body.conversation_id
    )
    metrics: ApiMetrics = request.app.state.metrics

    def events() -> Iterator[str]:
        yield sse_event("meta", {"conversation_id": plan.conversation_id})
        prose = ProseStream(prose_only)
        result: TurnResult | None = None
        try:
            for item in stream_turn(runtime, user_id=user.id, question=body.message, plan=plan):
                if isinstance(item, TurnResult):
                    result = item
                elif delta := prose.feed(item):
                    yield sse_event("token", {"delta": delta})
            assert result is not None
            reply = public_reply(result)
            if tail := prose.finish(reply.answer):
                yield sse_event("token", {"delta": tail})
            _record(metrics, result)
            yield sse_event("final", reply.model_dump(mode="json"))
        except CitewallError as exc:
            metrics.record_error(exc)
            log.warning("stream failed: %s: %s", type(exc).__name__, exc)
            yield sse_event("error", {"detail": detail_for(exc)})
        except Exception as exc:
            metrics.record_error(exc)
            log.exception("stream failed unexpectedly", exc_info=exc)
            yield sse_event("error", {"detail": "internal error; it has been logged"})

    return StreamingResponse(
        events(),
        media_type="text/event-stream",
        headers={"X-Accel-Buffering": "no"},  # no-store comes from the headers middleware
    )
