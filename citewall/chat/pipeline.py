"""The answer pipeline: condense -> retrieve -> judge answerability -> generate -> verbatim
cap -> reconcile -> (attribute) -> enrich -> sources -> exposure.

Small talk ("hi", "thanks") gets a friendly reply without retrieval
(``answer_status="small_talk"``); so does a question written in another language than the
knowledge base's: one sentence saying which language the assistant answers in
(``answer_status="other_language"``, ``text.language``). A follow-up is retrieved
with the conversation (``runtime.AnswerPolicy.condenser``); a question the retrieved context cannot
answer (``AnswerPolicy.thresholds``), or an answer nothing in the context supports (no valid
citation, even after attribution), gets one honest sentence instead, with no sources and
``answer_status="not_found"``.

Corpus protection (``chat.corpus_protection``, docs/distillation.md): the verbatim cap
(``AnswerPolicy.max_internal_sentences``) limits the answer sentences that copy an internal
card, also while streaming; ``admit`` (the member's exposure budget, ``chat.budget``) sees the
retrieved context before anything is generated and may restrict the turn to the context's
external cards; the answer records which internal cards it cited or copied from
(``Answer.exposures``).

``stream_answer`` yields the turn as events: text deltas, one ``Generating`` before the model's
first delta (what the answer is written from), then one frozen ``Answer``; ``answer_question``
collects them. An ``Answer`` is the ``storage.turns.AnswerRecord`` persistence stores as it is
(the content with its markers, the FULL stored sources, internal cards included: the serve
boundary filters them later, one retrieval event per retrieved card), with what the API needs
to serve it. Every answer is built once, whole: a restriction, a "not found" or a stop
(``stopped_answer``, through the same ``settle``) is decided before it is built, never patched
onto it. Nothing here knows about HTTP; persistence is ``chat.turn``.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from citewall.chat.corpus_protection import (
    CapCounter,
    SentenceGate,
    VerbatimCap,
    apply_cap,
    measure_exposure,
)
from citewall.chat.smalltalk import smalltalk_reply
from citewall.chat.staff_check import REMOVED_KEY, StaffFilter, keep_all
from citewall.citations.enrich import enrich_citations
from citewall.citations.models import Citation
from citewall.citations.provenance import keep_copies_internal
from citewall.citations.reconcile import reconcile
from citewall.errors import GenerationError
from citewall.generation.attribution import attribute
from citewall.generation.protocols import Generator, Turn
from citewall.kb.audiences import Viewer, retrievable_for
from citewall.retrieval.answerability import Signals, measure
from citewall.retrieval.protocols import Embedder, Retriever
from citewall.retrieval.types import RetrievalRecord, RetrievedContext
from citewall.runtime import AnswerPolicy
from citewall.storage.models import AnswerStatus, Restriction
from citewall.storage.sources import StoredSource
from citewall.storage.turns import AnswerRecord
from citewall.text.cleaning import clean_text
from citewall.text.language import other_language_reply
from citewall.text.question import CleanQuestion

#: The honest answer when the knowledge base does not answer the question (no citations).
NOTHING_FOUND = (
    "I couldn't find anything about that in the knowledge base, so I can't answer it from there."
)


#: The exposure budget's say on a turn: called once with the retrieved context (empty for small
#: talk) before anything is generated; returns why the turn may use external cards only, or
#: None. It may raise (e.g. ``StorageError``): then nothing of the turn is generated.
Admit = Callable[[RetrievedContext], Restriction | None]


def admit_all(_context: RetrievedContext) -> Restriction | None:
    """No exposure budget: every context is used whole."""
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer(AnswerRecord):
    """One answered question, ready to store as it is (an ``AnswerRecord``) and to serve
    (through the boundary): with its citations and the context it was written from."""

    citations: tuple[Citation, ...] = ()
    context: RetrievedContext = field(default_factory=RetrievedContext)
    #: True when the citations came from post-hoc attribution (the model wrote no valid marker).
    attributed: bool = False
    #: The answerability signals the status was decided on (``support`` is their ``dense``).
    signals: Signals | None = None


@dataclass(frozen=True, slots=True)
class Generating:
    """The event a stream yields when the model starts writing: what the answer is written
    from. A caller that may stop the answer keeps it to settle what was shown
    (``stopped_answer``)."""

    context: RetrievedContext
    retrieval_query: str
    signals: Signals | None
    #: The timings so far (condense, retrieve, judge).
    timings_ms: Mapping[str, float]
    #: ``time.perf_counter()`` when the model started writing.
    started: float
    generator_name: str
    #: What ``admit`` decided for the turn.
    restricted: Restriction | None


#: What ``stream_answer`` yields: text deltas, one ``Generating`` before the model's first
#: delta (not for small talk or "not found"), then one final ``Answer``.
AnswerEvent = str | Generating | Answer


def without_small_talk(history: Sequence[Turn]) -> list[Turn]:
    """The conversation without its small talk ("hi", "thanks") and the replies to it: a
    follow-up leans on the last question, not on the "thanks" in between.

    >>> [t.content for t in without_small_talk([Turn("user", "Refunds?"), Turn("user", "thanks"),
    ...     Turn("assistant", "You're welcome!")])]
    ['Refunds?']
    """
    kept: list[Turn] = []
    skipping = False
    for turn in history:
        if turn.role == "user":
            skipping = smalltalk_reply(turn.content) is not None
        if not skipping:
            kept.append(turn)
    return kept


def answer_question(
    question: CleanQuestion,
    *,
    retriever: Retriever,
    generator: Generator,
    embedder: Embedder,
    viewer: Viewer = Viewer(),
    history: Sequence[Turn] = (),
    policy: AnswerPolicy = AnswerPolicy(),
    admit: Admit = admit_all,
) -> Answer:
    """Answer ``question`` (cleaned where it entered, ``text.question``) from the knowledge base
    (non-streaming)."""
    final: Answer | None = None
    for event in stream_answer(
        question,
        retriever=retriever,
        generator=generator,
        embedder=embedder,
        viewer=viewer,
        history=history,
        policy=policy,
        admit=admit,
        streaming=False,
    ):
        if isinstance(event, Answer):
            final = event
    if final is None:  # stream_answer always ends with an Answer; guard against a regression
        raise GenerationError("the answer pipeline produced no final answer")
    return final


def stream_answer(
    question: CleanQuestion,
    *,
    retriever: Retriever,
    generator: Generator,
    embedder: Embedder,
    viewer: Viewer = Viewer(),
    history: Sequence[Turn] = (),
    policy: AnswerPolicy = AnswerPolicy(),
    admit: Admit = admit_all,
    streaming: bool = True,
) -> collections.abc.Generator[AnswerEvent, None, None]:
    """Yield the reply's text deltas, then one final ``Answer`` (``AnswerEvent``).

    The deltas are the generator's raw text (markers included); a member-facing caller strips
    them (``boundary.prose_only``). The final ``Answer.content`` is authoritative: with
    post-hoc attribution it may carry markers the deltas did not, and an answer nothing
    supports is replaced by ``NOTHING_FOUND``. ``admit`` decides the exposure budget once the
    context is known, before the first delta. A ``Generating`` event comes before the model's
    first delta, so that a caller can keep a stopped answer (``stopped_answer``).
    ``viewer`` is who the answer is for: retrieval considers only the cards their audiences
    allow (``kb.audiences.retrievable_for``), so nothing after it can see another card. Left
    out, it is a member in no group: the least a caller that forgets it can be shown.
    """
    t_start = time.perf_counter()
    timings: dict[str, float] = {}
    # Small talk, and a question in another language than the KB's, are answered unretrieved.
    status: AnswerStatus = "small_talk"
    reply = smalltalk_reply(question)
    if reply is None and policy.kb_language is not None:
        reply = other_language_reply(question, policy.kb_language)
        status = "other_language"
    if reply is not None:
        restricted = admit(RetrievedContext())
        yield reply
        timings["total"] = (time.perf_counter() - t_start) * 1000.0
        yield _not_found(
            reply,
            RetrievedContext(),
            generator_name=generator.name,
            timings=timings,
            status=status,
            restricted=restricted,
        )
        return
    condensed = policy.condenser.condense(question, without_small_talk(history))
    timings["condense"] = (time.perf_counter() - t_start) * 1000.0
    t_retrieve = time.perf_counter()
    context = retriever.retrieve(condensed.query, cards=retrievable_for(viewer))
    restricted = admit(context)
    if restricted is not None:
        context = external_context(context)
    timings.update({f"retrieve.{k}": v for k, v in context.timings_ms.items()})
    timings["retrieve"] = (time.perf_counter() - t_retrieve) * 1000.0
    t_judge = time.perf_counter()
    judge = policy.thresholds.measure if policy.thresholds is not None else measure
    signals = judge(condensed.query, context) if context.chunks else None
    answerable = signals is not None and (
        policy.thresholds is None or policy.thresholds.answerable(signals)
    )
    timings["judge"] = (time.perf_counter() - t_judge) * 1000.0
    if not answerable:
        yield NOTHING_FOUND
        timings["total"] = (time.perf_counter() - t_start) * 1000.0
        yield _not_found(
            NOTHING_FOUND,
            context,
            generator_name=generator.name,
            timings=timings,
            retrieval_query=condensed.query,
            signals=signals,
            restricted=restricted,
        )
        return
    start = Generating(
        context=context,
        retrieval_query=condensed.query,
        signals=signals,
        timings_ms=dict(timings),
        started=time.perf_counter(),
        generator_name=generator.name,
        restricted=restricted,
    )
    yield start
    counter = (
        CapCounter(VerbatimCap(policy.max_internal_sentences, policy.span_words), context.chunks)
        if policy.max_internal_sentences > 0 and any(not c.is_external for c in context.chunks)
        else None
    )
    staff = (
        StaffFilter(policy.staff_vocabulary, (c.reply for c in context.chunks if c.reply))
        if policy.staff_vocabulary is not None
        else None
    )
    # Staff-only sentences go first, so that one never uses up the verbatim cap.
    keep = keep_all(staff.keep if staff else None, counter.keep if counter else None)
    # Model output is untrusted text: cleaned before anyone sees or stores it (a model can
    # send a lone surrogate as a JSON escape, or repeat a hostile card's bidi override).
    # The rule's query ("Q1 ... and for annual plans?") is what the extractive generator scores
    # sentences against; a model reads the member's own words with the conversation.
    asked = condensed.query if condensed.method == "rule" else question
    if streaming:
        parts: list[str] = []
        held: list[str] | None = []
        gate = SentenceGate(keep) if keep is not None else None
        raws = generator.stream(asked, context.chunks, history)
        for delta in _gated((clean_text(raw) for raw in raws), gate):
            parts.append(delta)
            if held is None:
                yield delta
                continue
            # Nothing is shown until the text cites a card of the context: a reply that never
            # does becomes NOTHING_FOUND, and its words must not have reached the member first.
            held.append(delta)
            if reconcile("".join(parts), context.chunks).citations:
                yield "".join(held)
                held = None
        text = "".join(parts)
        if staff is not None and staff.removed:  # a removed last sentence leaves its separator
            text = text.rstrip()
    else:
        text = clean_text(generator.generate(asked, context.chunks, history).text)
        if keep is not None:
            text = apply_cap(text, keep)
        yield text
    timings["generate"] = (time.perf_counter() - start.started) * 1000.0
    if staff is not None and staff.removed:  # for admins: the stored turn's timings
        timings[REMOVED_KEY] = float(len(staff.removed))
    yield settle(
        text,
        start,
        status="answered",
        embedder=embedder,
        span_words=policy.span_words,
        timings=timings,
        t_start=t_start,
    )


def settle(
    text: str,
    start: Generating,
    *,
    status: AnswerStatus,
    embedder: Embedder,
    span_words: int,
    timings: Mapping[str, float],
    t_start: float | None = None,
) -> Answer:
    """The answer ``text`` makes, written from ``start``'s context: reconciled, attributed when
    nothing valid was cited, with its sources, events and exposures (``cite``). Text nothing
    in the context supports becomes the ``NOTHING_FOUND`` answer. ``t_start`` (the turn's
    ``time.perf_counter()``) adds the total time."""
    cited = cite(text, start.context, embedder=embedder, span_words=span_words)
    if not cited.citations:  # nothing in the context supports what was written
        total = _total(dict(timings), t_start)
        return _not_found(
            NOTHING_FOUND,
            start.context,
            generator_name=start.generator_name,
            timings=total,
            retrieval_query=start.retrieval_query,
            signals=start.signals,
            restricted=start.restricted,
            dropped_markers=cited.dropped_markers,
        )
    chunks = start.context.chunks
    ids = {c.card_id for c in cited.citations}
    return Answer(
        content=cited.content,
        citations=cited.citations,
        sources=cited.sources,
        context=start.context,
        hybrid_path=start.context.hybrid_path,
        dropped_markers=cited.dropped_markers,
        generator_name=start.generator_name,
        timings_ms=_total({**timings, "cite": cited.cite_ms}, t_start),
        events=cited.events,
        attributed=cited.attributed,
        answer_status=status,
        retrieval_query=start.retrieval_query,
        signals=start.signals,
        support=start.signals.dense if start.signals is not None else None,
        exposures=tuple(measure_exposure(cited.content, chunks, ids, span_words)),
        restricted=start.restricted,
    )


def stopped_answer(
    shown: str, start: Generating | None, *, embedder: Embedder, span_words: int
) -> Answer | None:
    """The answer to store when the member stopped after ``shown`` (raw text, markers kept)
    of an answer that began with ``start``: ``answer_status="stopped"``, settled as a whole
    answer is (its sources are the cards the shown text cites, each retrieval event says
    whether it was cited in it, its exposures are measured on it).

    None when nothing from the knowledge base was said yet: no ``start`` (small talk and "not
    found" replies are stored whole or not at all), no text, or text that cites no card (the
    pipeline shows nothing of a reply before it cites).
    """
    if start is None or not shown.strip():
        return None
    if not reconcile(shown, start.context.chunks).citations:
        return None
    timings = {
        **start.timings_ms,
        "generate": (time.perf_counter() - start.started) * 1000.0,
    }
    return settle(
        shown, start, status="stopped", embedder=embedder, span_words=span_words, timings=timings
    )


def _total(timings: dict[str, float], t_start: float | None) -> dict[str, float]:
    if t_start is not None:
        timings["total"] = (time.perf_counter() - t_start) * 1000.0
    return timings


def external_context(context: RetrievedContext) -> RetrievedContext:
    """``context`` with its external cards only (a member whose exposure budget is spent).

    The answerability signal is re-read from the cards kept: an internal card's similarity
    must not make the external remainder look like an answer.
    """
    return dataclasses.replace(
        context, chunks=[c for c in context.chunks if c.is_external], top_dense=None
    )


def _gated(deltas: Iterator[str], gate: SentenceGate | None) -> Iterator[str]:
    """The non-empty deltas, through the verbatim cap's sentence gate when there is one."""
    for delta in deltas:
        if gate is not None:
            delta = gate.feed(delta)
        if delta:
            yield delta
    if gate is not None and (rest := gate.finish()):
        yield rest


def _not_found(
    content: str,
    context: RetrievedContext,
    *,
    generator_name: str,
    timings: Mapping[str, float],
    status: AnswerStatus = "not_found",
    retrieval_query: str | None = None,
    signals: Signals | None = None,
    restricted: Restriction | None = None,
    dropped_markers: int = 0,
) -> Answer:
    """An answer that answers nothing from the knowledge base: no citations, no sources; the
    retrieved cards (if any) are still logged as retrieval events, none of them cited."""
    return Answer(
        content=content,
        context=context,
        hybrid_path=context.hybrid_path,
        dropped_markers=dropped_markers,
        generator_name=generator_name,
        timings_ms=dict(timings),
        events=tuple(
            RetrievalRecord.from_chunk(chunk, i, context.hybrid_path, False)
            for i, chunk in enumerate(context.chunks, start=1)
        ),
        answer_status=status,
        retrieval_query=retrieval_query,
        signals=signals,
        support=signals.dense if signals is not None else None,
        restricted=restricted,
    )


@dataclass(frozen=True, slots=True)
class Cited:
    """Text reconciled with the context it was written from (``cite``)."""

    #: The text as stored: markers kept (attribution's, when it inserted them).
    content: str
    citations: tuple[Citation, ...]
    sources: tuple[StoredSource, ...]
    events: tuple[RetrievalRecord, ...]
    dropped_markers: int
    attributed: bool
    cite_ms: float


def cite(
    text: str, context: RetrievedContext, *, embedder: Embedder, span_words: int = 10
) -> Cited:
    """Reconcile, attribute when nothing valid was cited, enrich, build sources and events.

    Whichever generator wrote the markers (or attribution inserted them), a sentence copied
    from an internal card cites no public card (``keep_copies_internal``)."""
    t0 = time.perf_counter()
    chunks = context.chunks
    text = keep_copies_internal(text, chunks, span_words)
    rec = reconcile(text, chunks)
    content = text
    attributed = False
    citations = rec.citations
    if not citations:
        annotated = keep_copies_internal(attribute(text, chunks, embedder), chunks, span_words)
        if annotated != text:
            again = reconcile(annotated, chunks)
            if again.citations:
                content = annotated
                attributed = True
                citations = [c.model_copy(update={"attributed": True}) for c in again.citations]
    citations = enrich_citations(citations, context)
    index = {c.id: i for i, c in reversed(list(enumerate(chunks)))}
    sources: list[StoredSource] = []
    for citation in citations:
        i = index[citation.card_id]
        chunk = chunks[i]
        sources.append(
            StoredSource(
                n=i + 1,
                card_id=citation.card_id,
                title=chunk.title,
                text=chunk.text,
                span=citation.span,
                source_url=citation.source_url,
                source_license=citation.source_license,
                retrieved_score=citation.retrieved_score,
                attributed=citation.attributed,
                metadata=dict(chunk.metadata),
            )
        )
    cited = {c.card_id for c in citations}
    events = tuple(
        RetrievalRecord.from_chunk(chunk, i, context.hybrid_path, chunk.id in cited)
        for i, chunk in enumerate(chunks, start=1)
    )
    return Cited(
        content=content,
        citations=tuple(citations),
        sources=tuple(sources),
        events=events,
        dropped_markers=rec.dropped,
        attributed=attributed,
        cite_ms=(time.perf_counter() - t0) * 1000.0,
    )
