"""Corpus protection in a turn (docs/distillation.md): the verbatim cap, exposure accounting
and the exposure budget.

- **Verbatim cap**: an answer may repeat internal text verbatim in at most
  ``VerbatimCap.max_sentences`` sentences; a sentence that shares ``span_words`` consecutive
  words with an internal card of the context counts, and those beyond the cap are dropped.
  ``CapCounter`` decides sentence by sentence, so a stream can apply it as it goes
  (``SentenceGate``) and show nothing it later drops.
- **Exposure accounting**: ``measure_exposure`` says which internal cards an answer cited or
  copied from, which of their sentences it repeats whole, and the longest shared run of words.
- **Budget**: ``Budget.spent`` is true once a member has been exposed to ``cards`` distinct
  internal cards within the rolling window; the turn then answers from external cards only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from citewall.citations.sentences import sentence_spans
from citewall.citations.verbatim import (
    Words,
    card_sentences,
    longest_span,
    repeated_sentences,
    sentence_key,
    words,
)
from citewall.retrieval.types import ContextChunk
from citewall.storage.exposure.rows import ExposureRecord


@dataclass(frozen=True, slots=True)
class VerbatimCap:
    """At most ``max_sentences`` answer sentences may copy ``span_words``+ consecutive words
    of an internal card."""

    max_sentences: int
    span_words: int


@dataclass(frozen=True, slots=True)
class Budget:
    """At most ``cards`` distinct internal cards per member in any ``window``."""

    cards: int
    window: timedelta

    @classmethod
    def of(cls, cards: int, window_hours: float) -> Budget | None:
        """The budget a setting asks for: ``cards`` per ``window_hours``; None when ``cards``
        is 0 or less (the budget is off).

        >>> Budget.of(0, 24) is None, Budget.of(3, 24)
        (True, Budget(cards=3, window=datetime.timedelta(days=1)))
        """
        return cls(cards, timedelta(hours=window_hours)) if cards > 0 else None

    def since(self, now: datetime) -> datetime:
        return now - self.window

    def spent(self, exposed_cards: int) -> bool:
        return exposed_cards >= self.cards


def internal_words(chunks: Sequence[ContextChunk]) -> list[Words]:
    """The words of each internal card of the context."""
    return [words(c.all_text) for c in chunks if not c.is_external]


class CapCounter:
    """Applies a ``VerbatimCap`` to an answer's sentences in order (stateful: one per answer)."""

    def __init__(self, cap: VerbatimCap, chunks: Sequence[ContextChunk]) -> None:
        self._cap = cap
        self._internal = internal_words(chunks)
        self.copied = 0
        self.dropped = 0

    def copies(self, sentence: str) -> bool:
        """Does ``sentence`` repeat ``span_words`` consecutive words of an internal card?"""
        w = words(sentence)
        span = self._cap.span_words
        return len(w) >= span and any(longest_span(w, card) >= span for card in self._internal)

    def keep(self, sentence: str) -> bool:
        """Keep ``sentence``? False once the cap's verbatim sentences are used up."""
        if not self.copies(sentence):
            return True
        if self.copied < self._cap.max_sentences:
            self.copied += 1
            return True
        self.dropped += 1
        return False


def apply_cap(text: str, keep: Callable[[str], bool]) -> str:
    """``text`` without the sentences ``keep`` refuses (each kept sentence keeps the
    whitespace before it, so line breaks and lists survive)."""
    out: list[str] = []
    previous_end = 0
    for start, end in sentence_spans(text):
        if keep(text[start:end]):
            out.append(text[previous_end:end] if out else text[start:end])
        previous_end = end
    if out and previous_end < len(text):
        out.append(text[previous_end:])
    return "".join(out)


class SentenceGate:
    """Releases streamed text a whole sentence at a time, each checked by ``keep``.

    A sentence is released once the text after it has started a new one (so citation markers
    after its full stop have arrived and stay with it); ``finish`` releases the rest.
    """

    def __init__(self, keep: Callable[[str], bool]) -> None:
        self._keep = keep
        self._buffer = ""
        self._ends_in_space = True  # nothing released yet: no separator needed

    def feed(self, delta: str) -> str:
        self._buffer += delta
        spans = sentence_spans(self._buffer)
        if len(spans) < 2:
            return ""
        last_start = spans[-1][0]
        if self._buffer[last_start] == "[":  # maybe a marker still arriving for the sentence
            return ""
        done, self._buffer = self._buffer[:last_start], self._buffer[last_start:]
        return self._release(done)

    def finish(self) -> str:
        done, self._buffer = self._buffer, ""
        return self._release(done)

    def _release(self, text: str) -> str:
        kept = apply_cap(text, self._keep)
        if not kept:
            return ""
        # A dropped sentence takes its separator with it: keep the words apart.
        if not self._ends_in_space and not kept[:1].isspace():
            kept = " " + kept
        self._ends_in_space = kept[-1:].isspace()
        return kept


def measure_exposure(
    prose: str, chunks: Sequence[ContextChunk], cited: set[str], span_words: int
) -> list[ExposureRecord]:
    """The internal cards of ``chunks`` this answer cited or copied from (a whole sentence,
    or ``span_words`` consecutive words), with what of them it repeats."""
    answer = words(prose)
    out: list[ExposureRecord] = []
    seen: set[str] = set()
    for chunk in chunks:
        if chunk.is_external or chunk.id in seen:
            continue
        seen.add(chunk.id)
        sentences = card_sentences(chunk.all_text)
        repeated = repeated_sentences(answer, sentences)
        span = longest_span(answer, words(chunk.all_text))
        if chunk.id in cited or repeated or span >= span_words:
            out.append(
                ExposureRecord(
                    card_id=chunk.id,
                    cited=chunk.id in cited,
                    sentences=tuple(sentence_key(sentences[i]) for i in repeated),
                    card_sentences=sum(1 for s in sentences if s),
                    longest_span=span,
                )
            )
    return out
