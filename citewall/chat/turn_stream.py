"""A streamed turn the member can stop: deltas while the model writes, then the stored turn;
or, when the member stops it, the prose said so far stored as a ``stopped`` answer.

``TurnStream`` is what the streaming routes iterate. Its caller decides that the member stopped
(the connection closed) and what they were shown; ``stop`` then ends the model's stream and
stores the question with the partial answer, its retrieval events and exposures in one
transaction (``persist_turn``), exactly as a whole answer is stored.

The member's exposure budget is reserved before the first delta (``chat.budget``). A turn
that ends before any delta was yielded (a failure, a stop) releases its reservation; once
prose went out it is kept until the turn is stored, or, if it never is, until it leaves the
budget's window.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from citewall.chat.budget import ExposureGate
from citewall.chat.pipeline import Answer, Generating, stopped_answer, stream_answer
from citewall.chat.turn import TurnPlan, TurnResult, persist_turn
from citewall.errors import GenerationError
from citewall.kb.audiences import Viewer
from citewall.runtime import Runtime

log = logging.getLogger("citewall.chat")


class TurnStream:
    """Iterate for the answer's raw text deltas (markers kept), then the persisted
    ``TurnResult``. Nothing is stored unless the whole answer was produced, or ``stop`` keeps
    what the member was shown."""

    def __init__(self, runtime: Runtime, *, user_id: int, viewer: Viewer, plan: TurnPlan) -> None:
        self.plan = plan
        self._runtime = runtime
        self._user_id = user_id
        self._policy = runtime.answer_policy()
        self._gate = ExposureGate.of(runtime, user_id)
        self._answers = stream_answer(
            plan.question,
            retriever=runtime.retriever,
            generator=runtime.generator,
            embedder=runtime.embedder,
            viewer=viewer,
            history=plan.history,
            policy=self._policy,
            admit=self._gate.admit,
        )
        #: What the answer is written from, once the model starts writing (for ``stop``).
        self._start: Generating | None = None
        #: The stored turn, once there is one (whole or stopped).
        self.result: TurnResult | None = None
        self._stopped = False
        self._yielded = False

    def __iter__(self) -> Iterator[str | TurnResult]:
        answer: Answer | None = None
        try:
            for event in self._answers:
                if isinstance(event, str):
                    self._yielded = True
                    yield event
                elif isinstance(event, Generating):
                    self._start = event
                else:
                    answer = event
        except Exception:
            if not self._yielded:  # nothing went out: the reservation may go
                self._gate.release()
            raise
        if self._stopped:
            return
        if answer is None:
            raise GenerationError(
                "the answer stream ended without a final answer; nothing was stored"
            )
        yield self._persist(answer)

    def stop(self, shown: str) -> TurnResult | None:
        """The member stopped the answer after being shown ``shown`` (the raw text of the deltas
        they received, markers kept; a prefix of what this stream yielded).

        Ends the model's stream, then stores the question and the partial answer with
        ``answer_status="stopped"`` (``pipeline.stopped_answer``), unless the turn was stored
        already or nothing from the knowledge base was said yet: then None, and nothing is
        stored.
        """
        if self.result is not None or self._stopped:
            return None
        self._stopped = True
        self._answers.close()  # the model stops writing (its HTTP stream is closed)
        answer = stopped_answer(
            shown, self._start, embedder=self._runtime.embedder, span_words=self._policy.span_words
        )
        if answer is None:
            log.info("answer stopped before anything from the knowledge base was said")
            self._gate.release()
            return None
        return self._persist(answer)

    def _persist(self, answer: Answer) -> TurnResult:
        self.result = persist_turn(
            self._runtime.session_factory,
            user_id=self._user_id,
            plan=self.plan,
            answer=answer,
            gate=self._gate,
            now=self._runtime.clock(),
        )
        return self.result
