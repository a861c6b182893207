"""Reconciliation: the model's ``[n]`` markers -> card-level citations over the context.

Pure. ``[n]`` means ``context[n-1]``; a number outside ``1..len(context)`` (or one the parser
could not represent) is dropped and counted. Citations are per card, deduplicated and ordered
by first appearance; ``span`` is the answer sentence carrying the first marker for that card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from citewall.citations.markers import parse_markers
from citewall.citations.models import Citation
from citewall.citations.sentences import sentence_index, sentence_spans
from citewall.retrieval.types import ContextChunk


@dataclass(frozen=True, slots=True)
class Reconciliation:
    """The citations a reply makes and how many marker numbers pointed nowhere."""

    citations: list[Citation] = field(default_factory=list)
    dropped: int = 0
    #: Context numbers (1-based) actually cited, in first-appearance order.
    numbers: tuple[int, ...] = ()


def reconcile(text: str, context: Sequence[ContextChunk]) -> Reconciliation:
    """Turn the markers in ``text`` into citations of ``context`` cards.

    >>> from citewall.retrieval.types import ContextChunk
    >>> ctx = [ContextChunk(id="a", text="A."), ContextChunk(id="b", text="B.")]
    >>> r = reconcile("Yes [2]. Also [1, 2, 9].", ctx)
    >>> [c.card_id for c in r.citations], r.dropped
    (['b', 'a'], 1)
    """
    markers = parse_markers(text)
    if not markers:
        return Reconciliation()
    spans = sentence_spans(text)
    citations: list[Citation] = []
    seen: set[str] = set()
    numbers: list[int] = []
    dropped = 0
    for marker in markers:
        dropped += marker.invalid
        for n in marker.numbers:
            if not 1 <= n <= len(context):
                dropped += 1
                continue
            card_id = context[n - 1].id
            if not isinstance(card_id, str) or not card_id:
                dropped += 1
                continue
            if card_id in seen:
                continue
            seen.add(card_id)
            numbers.append(n)
            span = None
            if spans:
                s, e = spans[sentence_index(spans, marker.start)]
                span = text[s:e]
            citations.append(Citation(card_id=card_id, span=span))
    return Reconciliation(citations=citations, dropped=dropped, numbers=tuple(numbers))
