"""The SSE answer stream shared by ``POST /api/v1/chat/stream`` and
``POST /api/v1/conversations/{id}/regenerate``: ``meta``, ``token``..., then ``final`` or
``error``. Prose only, external sources only (``public_reply``).

A member stops an answer by closing the connection. The server hears it (``EventStream``) and
stores the question with the prose said so far as a ``stopped`` answer (``TurnStream.stop``):
checked between deltas while the model writes, and again when the response closes a stream that
was cut short at a ``yield``. What is kept is the raw text behind the token events sent before
the disconnect was heard (``ProseStream.settled``), so a reload shows what the member read.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Generator

from sqlalchemy.exc import InterfaceError, OperationalError

from citewall.api.errors import detail_for
from citewall.api.metrics import ApiMetrics
from citewall.api.prose_stream import ProseStream
from citewall.api.schemas import ChatResponsePublic
from citewall.api.sse import EventStream, sse_event
from citewall.boundary.external import external_sources_only
from citewall.boundary.prose import IncrementalProse, prose_only
from citewall.chat.turn import TurnResult
from citewall.chat.turn_stream import TurnStream
from citewall.errors import CitewallError, StorageError

log = logging.getLogger("citewall.api")


def public_reply(result: TurnResult) -> ChatResponsePublic:
    """The member's view of a persisted turn."""
    answer = result.answer
    return ChatResponsePublic(
        conversation_id=result.conversation_id,
        title=result.title,
        message_id=result.message_id,
        answer=prose_only(answer.content),
        answer_status=answer.answer_status,
        # Serve boundary (decision 0002): a member never receives an internal source.
        sources=external_sources_only(answer.sources, hybrid_path=answer.hybrid_path),
        hybrid_path=answer.hybrid_path,
        created_at=result.created_at,
    )


def record_turn(metrics: ApiMetrics, result: TurnResult) -> None:
    """Count a stored turn (answer path, dropped markers, rerank budget, restriction)."""
    answer = result.answer
    metrics.record_answer(
        answer.hybrid_path, answer.dropped_markers, answer.context.rerank_over_budget
    )
    metrics.record_restriction(answer.restricted is not None, result.alert)


def _stop(turn: TurnStream, shown: str, metrics: ApiMetrics) -> None:
    """The member closed the stream after being shown ``shown``: keep it (never raises)."""
    if turn.result is not None:  # stored whole already; only the final event was missed
        return
    try:
        result = turn.stop(shown)
    except CitewallError as exc:
        metrics.record_error(exc)
        log.warning("a stopped answer could not be stored: %s: %s", type(exc).__name__, exc)
        return
    except Exception as exc:
        metrics.record_error(exc)
        log.exception("a stopped answer could not be stored", exc_info=exc)
        return
    metrics.record_stop(stored=result is not None)
    if result is not None:
        record_turn(metrics, result)


def answer_events(
    turn: TurnStream, metrics: ApiMetrics, client_gone: threading.Event
) -> Generator[str, None, None]:
    """The SSE frames of one streamed turn (see the module docstring)."""
    yield sse_event("meta", {"conversation_id": turn.plan.conversation_id})
    prose = ProseStream(IncrementalProse())
    try:
        for item in turn:
            if isinstance(item, TurnResult):
                reply = public_reply(item)
                if tail := prose.finish(reply.answer):
                    yield sse_event("token", {"delta": tail})
                record_turn(metrics, item)
                yield sse_event("final", reply.model_dump(mode="json"))
                return
            shown = prose.settled
            delta = prose.feed(item)
            if client_gone.is_set():  # this delta never reached the member
                _stop(turn, shown, metrics)
                return
            if delta:
                yield sse_event("token", {"delta": delta})
    except GeneratorExit:  # closed at a yield by EventStream: the client went away
        _stop(turn, prose.settled, metrics)
        raise
    except CitewallError as exc:
        metrics.record_error(exc)
        log.warning("stream failed: %s: %s", type(exc).__name__, exc)
        yield sse_event("error", {"detail": detail_for(exc)})
    except (OperationalError, InterfaceError) as exc:  # a connection lost where nothing wraps it
        metrics.record_error(exc)
        log.warning("stream failed: the database connection was lost: %s", exc)
        yield sse_event("error", {"detail": detail_for(StorageError("connection lost"))})
    except Exception as exc:
        metrics.record_error(exc)
        log.exception("stream failed unexpectedly", exc_info=exc)
        yield sse_event("error", {"detail": "internal error; it has been logged"})


def answer_stream(turn: TurnStream, metrics: ApiMetrics) -> EventStream:
    """The streaming response of one turn."""
    client_gone = threading.Event()
    return EventStream(answer_events(turn, metrics, client_gone), client_gone)
