"""Citation markers in answer text: ``[1]``, ``[1, 3]``, ``[1-3]``, ``[1][2]``, ``［１］``, and
the other forms models are known to write: ``【1】``, ``【1†source】``, ``[1†source]``, ``[^1]``
(a footnote reference) and ``[[1]]``. One grammar serves parsing (reconciliation cites them) and
stripping (members never see them). ``【4:0†source】`` (a retrieval-tool reference whose numbers
are not context numbers) is a marker too, stripped but never cited: it counts as dropped.

Pure functions, no I/O. Parsing never raises and never allocates a huge range: a range wider
than ``MAX_RANGE`` or a number above ``MAX_NUMBER`` is not expanded but counted in
``Marker.invalid`` (reconciliation counts it as a dropped marker).

Markers inside inline code, code fences and Markdown links (text or target) are not markers:
``[1](https://x)`` is a link the model wrote, and ``a[1]`` in code is an index.

Full-width forms are folded one character for one character (``［`` -> ``[``, ``１`` -> ``1``,
``，`` -> ``,``, ``－``/en dash -> ``-``), so offsets in the folded text are offsets in the input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: A range such as ``[1-50]`` expands; ``[1-51]`` or ``[1-99999999]`` does not (counted invalid).
MAX_RANGE = 50
#: Numbers above this are never cited (no context is that long); counted invalid.
MAX_NUMBER = 10_000

# One character for one character, so match offsets stay valid in the original text.
_FOLD = str.maketrans(
    {
        "［": "[",
        "］": "]",
        "【": "[",
        "】": "]",
        "，": ",",
        "、": ",",
        "－": "-",
        "–": "-",
        "—": "-",
        "‐": "-",
        "‑": "-",
        "−": "-",
        **{chr(0xFF10 + i): str(i) for i in range(10)},
    }
)

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

# Regions where brackets are not markers. Fences first (they contain backticks).
_FENCE = re.compile(r"(?ms)^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
# [text](target) or ![alt](src); the text may hold one level of brackets.
_LINK = re.compile(r"!?\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\)")
# <https://...> autolinks.
_AUTOLINK = re.compile(r"<[a-zA-Z][a-zA-Z0-9+.-]*:[^<>\s]*>")

_ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "st", "cf", "approx"}
)
_SENTENCE_END = re.compile(
    r"[.!?。！？]+[\"'”’)\]]*(?P<markers>(?:[ \t]*" + MARKER_PATTERN + r")*)"
)


@dataclass(frozen=True, slots=True)
class Marker:
    """One marker occurrence.

    ``numbers``: the cited context numbers, expanded and deduplicated in written order.
    ``start``/``end``: offsets of the marker in the text. ``sentence``: index into
    ``sentence_spans(text)`` of the sentence carrying it. ``invalid``: numbers that could not
    be cited at all (zero or negative, huge, or from a reversed or over-wide range).
    """

    numbers: tuple[int, ...]
    start: int
    end: int
    sentence: int
    raw: str
    invalid: int = 0


def fold(text: str) -> str:
    """Fold full-width brackets, digits, commas and dashes to ASCII (same length)."""
    return text.translate(_FOLD)


def protected_spans(text: str) -> list[tuple[int, int]]:
    """Offsets of code fences, inline code, Markdown links and autolinks (not prose)."""
    folded = fold(text)
    spans: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in spans)

    for pattern in (_FENCE, _INLINE_CODE, _LINK, _AUTOLINK):
        for m in pattern.finditer(folded):
            if free(m.start(), m.end()):
                spans.append((m.start(), m.end()))
    spans.sort()
    return spans


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(s <= pos < e for s, e in spans)


def _marker_matches(text: str) -> list[re.Match[str]]:
    folded = fold(text)
    spans = protected_spans(text)
    return [m for m in _MARKER.finditer(folded) if not _inside(m.start(), spans)]


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
        if _inside(m.start(), protected):
            continue
        if folded[m.start()] == "." and _word_before(folded, m.start()) in _ABBREVIATIONS:
            continue
        cuts.append(end)
    for i, ch in enumerate(folded):
        if ch == "\n" and not _inside(i, protected):
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


def parse_markers(text: str) -> list[Marker]:
    """Every citation marker in ``text``, in order. Never raises.

    >>> [m.numbers for m in parse_markers("A [1]. B [2, 3] and [4-5][6].")]
    [(1,), (2, 3), (4, 5), (6,)]
    >>> parse_markers("see `x[1]` and [1](https://e.x)")
    []
    """
    if not isinstance(text, str) or not text:
        return []
    sentences = sentence_spans(text)
    markers: list[Marker] = []
    for m in _marker_matches(text):
        numbers, invalid = _parse_numbers(m.group(0))
        sentence = 0
        for i, (s, e) in enumerate(sentences):
            if s <= m.start() < e:
                sentence = i
                break
        markers.append(
            Marker(
                numbers=numbers,
                start=m.start(),
                end=m.end(),
                sentence=sentence,
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
