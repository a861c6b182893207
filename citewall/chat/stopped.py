"""An answer the member stopped mid-way: the prose said so far, as an ``Answer`` to store.

The partial text goes through the same reconciliation as a whole answer
(``pipeline.finish_answer``): its sources are the cards the partial text cites, each retrieval
event says whether it was cited in it, and its exposures are measured on it. Nothing is kept
when nothing from the knowledge base was said yet: no text, or text that cites no card (the
pipeline shows nothing of a reply before it cites; small talk and "not found" replies are
stored whole or not at all).
"""

from __future__ import annotations

import time

from citewall.chat.exposure import measure_exposure
from citewall.chat.pipeline import Answer, AnswerPolicy, AnswerProgress, finish_answer
from citewall.citations.reconcile import reconcile
from citewall.retrieval.protocols import Embedder


def stopped_answer(
    shown: str,
    progress: AnswerProgress,
    *,
    generator: str,
    embedder: Embedder,
    policy: AnswerPolicy,
) -> Answer | None:
    """The answer to store when the member stopped after ``shown`` (raw text, markers kept),
    with ``answer_status="stopped"``; None when there is nothing to keep."""
    context = progress.context
    if context is None or not shown.strip() or not reconcile(shown, context.chunks).citations:
        return None
    answer = finish_answer(
        shown, context, generator=generator, embedder=embedder, span_words=policy.span_words
    )
    cited = {c.card_id for c in answer.citations}
    answer.exposures = measure_exposure(answer.content, context.chunks, cited, policy.span_words)
    answer.answer_status = "stopped"
    answer.restricted = progress.restricted
    answer.retrieval_query = progress.retrieval_query
    answer.signals = progress.signals
    timings = {**progress.timings_ms, **answer.timings_ms}
    if progress.generation_started is not None:
        timings["generate"] = (time.perf_counter() - progress.generation_started) * 1000.0
    answer.timings_ms = timings
    return answer
