"""Citation markers in answer text: ``[1]``, ``[1, 3]``, ``[1-3]``, ``[1][2]``, ``［１］``, and
the other forms models are known to write: ``【1】``, ``【1†source】``, ``[1†source]``, ``[^1]``
(a footnote reference) and ``[[1]]``. One grammar serves parsing (reconciliation cites them) and
stripping (members never see them). ``【4:0†source】`` (a retrieval-tool reference whose numbers
are not context numbers) is a marker too, stripped but never cited: it counts as dropped.

Pure functions, no I/O. Parsing never raises and never allocates a huge range: a range wider
than ``MAX_RANGE`` or a number above ``MAX_NUMBER`` is not expanded but counted in
``Marker.invalid`` (reconciliation counts it as a dropped marker).

Markers inside inline code, code fences and Markdown links (text or target) are not markers,
and full-width forms count as their ASCII ones (``citations.regions``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from citewall.citations.regions import fold, inside, protected_spans

#: A range such as ``[1-50]`` expands; ``[1-51]`` or ``[1-99999999]`` does not (counted invalid).
MAX_RANGE = 50
#: Numbers above this are never cited (no context is that long); counted invalid.
MAX_NUMBER = 10_000

_NUM = r"-?[0-9]+"
_ITEM = rf"{_NUM}(?:[ \t]*-[ \t]*{_NUM})?"
#: The dagger and the label after it in ``【3†source】``: never part of the numbers.
_LABEL = r"†[^\[\]\n]{0,200}"
# Numbers or ranges, comma-separated, optionally a footnote caret before and a label after;
# or a retrieval-tool reference ``4:0†label`` (not cited, see ``_parse_numbers``).
_BODY = (
    rf"\^?[ \t]*{_ITEM}(?:[ \t]*,[ \t]*{_ITEM})*[ \t]*,?[ \t]*(?:{_LABEL})?"
    rf"|[0-9]+:[0-9]+[ \t]*{_LABEL}"
)
#: A marker (after folding): ``[body]`` or ``[[body]]``.
MARKER_PATTERN = rf"(?:\[\[(?:{_BODY})\]\]|\[(?:{_BODY})\])"
_MARKER = re.compile(MARKER_PATTERN)
_ITEM_RE = re.compile(rf"({_NUM})(?:[ \t]*-[ \t]*({_NUM}))?")


@dataclass(frozen=True, slots=True)
class Marker:
    """One marker occurrence.

    ``numbers``: the cited context numbers, expanded and deduplicated in written order.
    ``start``/``end``: offsets of the marker in the text (``sentences.sentence_index`` finds
    the sentence carrying it). ``invalid``: numbers that could not be cited at all (zero or
    negative, huge, or from a reversed or over-wide range).
    """

    numbers: tuple[int, ...]
    start: int
    end: int
    raw: str
    invalid: int = 0


def _marker_matches(text: str) -> list[re.Match[str]]:
    folded = fold(text)
    spans = protected_spans(text)
    return [m for m in _MARKER.finditer(folded) if not inside(m.start(), spans)]


def _parse_numbers(marker: str) -> tuple[tuple[int, ...], int]:
    body = marker.strip("[]").lstrip("^").split("†", 1)[0]
    if ":" in body:  # ``4:0†source``: a tool's reference, not a context number
        return (), 1
    numbers: list[int] = []
    invalid = 0
    for m in _ITEM_RE.finditer(body):
        lo_s, hi_s = m.group(1), m.group(2)
        lo = _to_int(lo_s)
        if hi_s is None:
            if lo is None or lo < 1:
                invalid += 1
            else:
                numbers.append(lo)
            continue
        hi = _to_int(hi_s)
        if lo is None or hi is None or lo < 1 or hi < lo or hi - lo + 1 > MAX_RANGE:
            invalid += 1
            continue
        numbers.extend(range(lo, hi + 1))
    unique = tuple(dict.fromkeys(numbers))
    return unique, invalid


def _to_int(digits: str) -> int | None:
    """Parse a possibly signed number; None when it is above MAX_NUMBER (never a huge int)."""
    sign = -1 if digits.startswith("-") else 1
    body = digits.lstrip("-").lstrip("0") or "0"
    if len(body) > len(str(MAX_NUMBER)):
        return None
    value = int(body)
    if value > MAX_NUMBER:
        return None
    return sign * value


def parse_markers(text: str) -> list[Marker]:
    """Every citation marker in ``text``, in order. Never raises.

    >>> [m.numbers for m in parse_markers("A [1]. B [2, 3] and [4-5][6].")]
    [(1,), (2, 3), (4, 5), (6,)]
    >>> parse_markers("see `x[1]` and [1](https://e.x)")
    []
    """
    if not isinstance(text, str) or not text:
        return []
    markers: list[Marker] = []
    for m in _marker_matches(text):
        numbers, invalid = _parse_numbers(m.group(0))
        markers.append(
            Marker(
                numbers=numbers,
                start=m.start(),
                end=m.end(),
                raw=text[m.start() : m.end()],
                invalid=invalid,
            )
        )
    return markers


def _strip_once(text: str) -> str:
    matches = _marker_matches(text)
    if not matches:
        return text
    out: list[str] = []
    pos = 0
    for m in matches:
        start, end = m.start(), m.end()
        # Take the horizontal space before the marker with it ("days [1]." -> "days.").
        while start > pos and text[start - 1] in " \t":
            start -= 1
        if start == 0 or text[start - 1] == "\n":
            # A marker opening a line: take the space after it instead.
            while end < len(text) and text[end] in " \t":
                end += 1
        out.append(text[pos:start])
        pos = end
    out.append(text[pos:])
    return "".join(out)


def strip_markers(text: str) -> str:
    """Remove every marker (all forms) and tidy the space before punctuation.

    Repeats until no marker is left, since removing one can form another (``[[1]2]``).

    >>> strip_markers("Refunds take 5 days [1]. Ask billing [2, 3].")
    'Refunds take 5 days. Ask billing.'
    """
    if not isinstance(text, str):
        return ""
    current = text
    while True:
        stripped = _strip_once(current)
        if stripped == current:
            return current
        current = stripped
