"""Where brackets in answer text are not citation markers: code and Markdown links.

``fold`` maps full-width brackets, digits, commas and dashes to ASCII one character for one
character, so offsets found in the folded text are offsets in the input. ``protected_spans``
finds code fences, inline code, Markdown links (text and target) and autolinks: ``[1](https://x)``
is a link the model wrote, and ``a[1]`` in code is an index.
"""

from __future__ import annotations

import re

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

# Regions where brackets are not markers. Fences first (they contain backticks). Only a closed
# fence is code here: a model that echoes the prompt's opening fence and then cites ``[2]``
# is citing, and the member must not read the number.
_FENCE = re.compile(r"(?ms)^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?^[ \t]*\1[ \t]*$")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
# [text](target) or ![alt](src); the text may hold one level of brackets.
_LINK = re.compile(r"!?\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\)")
# <https://...> autolinks.
_AUTOLINK = re.compile(r"<[a-zA-Z][a-zA-Z0-9+.-]*:[^<>\s]*>")


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


def inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(s <= pos < e for s, e in spans)
