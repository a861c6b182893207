"""Sentence segmentation of answer text, markers kept with the sentence they close.

Sentences end at ``.``, ``!``, ``?`` (and full-width forms) followed by whitespace, and at line
breaks; markers written after the full stop (``days. [1]``) belong to the sentence before.
Abbreviations (``e.g.``) do not end a sentence; nothing inside code or a link does. Linear on
hostile input.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from citewall.citations.markers import MARKER_PATTERN
from citewall.citations.regions import fold, inside, protected_spans

_ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "st", "cf", "approx"}
)
_SENTENCE_END = re.compile(
    r"[.!?。！？]+[\"'”’)\]]*(?P<markers>(?:[ \t]*" + MARKER_PATTERN + r")*)"
)


def _word_before(text: str, pos: int) -> str:
    """The lower-cased word ending at ``pos`` (without trailing dots): "e.g" for "e.g."."""
    # Abbreviations are short: look back at most 40 characters, so a long run without spaces
    # (hostile model output) costs O(1) per sentence end rather than O(run length).
    start, floor = pos, max(0, pos - 40)
    while start > floor and not text[start - 1].isspace():
        start -= 1
    return text[start:pos].lower().rstrip(".")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Offsets of the sentences of ``text`` (markers after the full stop stay with it).

    Sentences end at ``.``, ``!``, ``?`` (and full-width forms) followed by whitespace, and at
    line breaks. Leading/trailing whitespace is trimmed; empty sentences are skipped.
    """
    folded = fold(text)
    cuts: list[int] = []
    protected = protected_spans(text)
    for m in _SENTENCE_END.finditer(folded):
        end = m.end()
        if end < len(folded) and not folded[end].isspace():
            continue
        if inside(m.start(), protected):
            continue
        if folded[m.start()] == "." and _word_before(folded, m.start()) in _ABBREVIATIONS:
            continue
        cuts.append(end)
    for i, ch in enumerate(folded):
        if ch == "\n" and not inside(i, protected):
            cuts.append(i)
    spans: list[tuple[int, int]] = []
    start = 0
    for cut in [*sorted(set(cuts)), len(text)]:
        if cut < start:
            continue
        s, e = start, cut
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            spans.append((s, e))
        start = cut
    return spans


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (see ``sentence_spans``).

    >>> split_sentences("Refunds take 5 days [1]. Ask billing [2].")
    ['Refunds take 5 days [1].', 'Ask billing [2].']
    """
    return [text[s:e] for s, e in sentence_spans(text)]


def sentence_index(spans: Sequence[tuple[int, int]], pos: int) -> int:
    """The index of the span holding offset ``pos`` (0 when none does).

    >>> text = "A [1]. B [2]."
    >>> sentence_index(sentence_spans(text), text.index("[2]"))
    1
    """
    for i, (start, end) in enumerate(spans):
        if start <= pos < end:
            return i
    return 0
