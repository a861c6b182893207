"""Provenance of answer sentences: a sentence copied from an internal card cites no public card.

A member sees the public cards an answer cites as source chips. An answer sentence whose words
come from an internal card (staff notes or reply) must not sit under a public chip, whichever
generator wrote its markers: a model can put ``[1]`` after a playbook's sentence, and post-hoc
attribution can match it to a public card. ``keep_copies_internal`` rewrites the markers of
such a sentence so that it cites the internal card it copies (never shown to a member as a
chip) instead of any public one.

A sentence copies an internal card when it shares ``span_words`` consecutive words with it, or
is a run of the card's words from end to end (``MIN_SENTENCE_WORDS`` words or more): the
verbatim cap's rule (``chat.corpus_protection``). A public card it cites that holds the same run
keeps its marker: then the public card says it too.
"""

from __future__ import annotations

from collections.abc import Sequence

from citewall.citations.markers import Marker, parse_markers
from citewall.citations.sentences import sentence_index, sentence_spans
from citewall.citations.verbatim import MIN_SENTENCE_WORDS, Words, longest_span, words
from citewall.retrieval.types import ContextChunk


def copied_from(
    sentence: Words, cards: Sequence[tuple[int, Words]], span_words: int
) -> tuple[int, int] | None:
    """The (context number, shared run) of the card in ``cards`` that ``sentence`` copies the
    longest run from, or None when it copies none (see the module docstring).

    >>> copied_from(words("Log it in Helm now."), [(2, words("Always log it in Helm now."))], 10)
    (2, 5)
    >>> copied_from(words("Log it."), [(2, words("Log it."))], 10) is None
    True
    """
    if len(sentence) < MIN_SENTENCE_WORDS:
        return None
    needed = min(span_words, len(sentence))
    best: tuple[int, int] | None = None
    for n, card in cards:
        run = longest_span(sentence, card)
        if run >= needed and (best is None or run > best[1]):
            best = (n, run)
    return best


def _rewritten(marker: Marker, keep: list[int]) -> str:
    return f"[{', '.join(str(n) for n in keep)}]" if keep else ""


def keep_copies_internal(text: str, context: Sequence[ContextChunk], span_words: int) -> str:
    """``text`` where no sentence copied from an internal card carries a public card's marker.

    Such a sentence's markers lose the public cards' numbers; when none is left, its first
    marker cites the internal card it copies. Other sentences are left exactly as written.

    >>> ctx = [
    ...     ContextChunk(id="help", text="Shopify orders sync hourly.", source="https://x.test/a"),
    ...     ContextChunk(id="pb", text="Route those through our integrations team lead."),
    ... ]
    >>> keep_copies_internal("Route those through our integrations team lead [1].", ctx, 10)
    'Route those through our integrations team lead [2].'
    >>> keep_copies_internal("Shopify orders sync hourly [1].", ctx, 10)
    'Shopify orders sync hourly [1].'
    """
    internal = [
        (n, words(chunk.all_text))
        for n, chunk in enumerate(context, start=1)
        if not chunk.is_external
    ]
    markers = parse_markers(text)
    if not internal or not markers:
        return text
    spans = sentence_spans(text)
    by_sentence: dict[int, list[Marker]] = {}
    for marker in markers:
        by_sentence.setdefault(sentence_index(spans, marker.start), []).append(marker)
    edits: list[tuple[Marker, str]] = []
    for index, found in by_sentence.items():
        start, end = spans[index]
        sentence = words(text[start:end])
        cited = {n for m in found for n in m.numbers if 1 <= n <= len(context)}
        public = {n for n in cited if context[n - 1].is_external}
        if not public:
            continue
        source = copied_from(sentence, internal, span_words)
        if source is None:
            continue
        n_internal, run = source
        # A cited public card holding as long a run says the same thing: it keeps its marker.
        backed = {n for n in public if longest_span(sentence, words(context[n - 1].text)) >= run}
        dropped = public - backed
        if not dropped:
            continue
        kept = [[n for n in m.numbers if n not in dropped] for m in found]
        if not any(kept):
            kept[0] = [n_internal]
        edits += [(m, _rewritten(m, keep)) for m, keep in zip(found, kept, strict=True)]
    out = text
    for marker, replacement in sorted(edits, key=lambda e: e[0].start, reverse=True):
        before = out[: marker.start]
        if not replacement:
            before = before.rstrip(" \t")
        out = before + replacement + out[marker.end :]
    return out
