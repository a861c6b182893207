"""Dangling references: text in a member's answer that points at a source the member cannot see.

Members get answer prose without ``[n]`` markers and only external sources (decision 0002,
docs/decisions/0002-external-only-citations.md), so any pointer left in the prose leads
nowhere: a number or placeholder that survived marker stripping ("see [3]", "[n]"), a source
named by number ("source 2", "passage 3"), talk about the model's context ("the passage",
"(untrusted data)", "the provided information"), internal material (a playbook, "our internal
guide", "(internal)", an owner note), a deictic pointer at a document ("use this matrix"), a
pointer whose object was stripped ("according to ."), a "Sources:" list, or a quoted internal
card title.

``dangling_references`` is a pure function over the text a member received (``answer`` of
``POST /api/v1/chat``); it is measured against hand labels (``kb/eval/dangling_labels.jsonl``)
on every evaluation run. Each rule names a kind of pointer, not a phrasing seen in one answer.

>>> [r.rule for r in dangling_references("Refunds take 5 days, see [3]. Sources: help center")]
['marker', 'source-list']
>>> dangling_references("Void the label from Shipping activity within 14 days.")
[]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: Nouns for the material a model is given (the prompt calls them passages).
_SOURCE_NOUN = (
    r"(?:sources?|passages?|documents?|docs?|references?|refs?\.?|citations?|snippets?"
    r"|excerpts?|context)"
)
#: Nouns for a document an answer might lean on.
_DOC_NOUN = (
    r"(?:matrix|table|chart|guide|guides|document|documents|doc|docs|article|articles|playbooks?"
    r"|runbooks?|checklist|passages?|excerpts?|snippets?|handbook|manual|wiki|policy document)"
)
_NUM = r"\d{1,3}"
_NUMS = rf"{_NUM}(?:\s*(?:,|and|or|&|-|–|to)\s*{_NUM})*"
#: A pointer whose object was a marker (stripped from member prose).
_POINTER = (
    r"(?:according to|as (?:stated|noted|described|shown|mentioned|explained|outlined|listed"
    r"|detailed|cited) in|refer(?:red)? to|cited in|cf\.?|(?:found|explained|described) in)"
)

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # [3], [1, 2], [1-999], [n]: citation brackets a member cannot resolve. Full-width too.
    (
        "marker",
        re.compile(
            r"[\[［]\s*(?:[0-9０-９]{1,4}(?:\s*[-,–－，]\s*[0-9０-９]{1,4})*|[a-z])\s*[\]］]"
        ),
    ),
    # "source 2", "passages 1 and 3", "document #4", "ref. 2".
    (
        "numbered-source",
        re.compile(rf"\b{_SOURCE_NOUN}\s*(?:#|no\.?|number)?\s*{_NUMS}\b", re.IGNORECASE),
    ),
    # The prompt's words for its context: passages, the untrusted-data header, "the context".
    (
        "context-talk",
        re.compile(
            r"\bpassages?\b|untrusted data"
            r"|\b(?:the|this|my)\s+(?:provided|given|supplied|retrieved|above)\s+"
            r"(?:context|text|texts|documents?|information|sources?|materials?|data|excerpts?"
            r"|snippets?)\b"
            r"|\b(?:based on|according to|from|in|per)\s+the\s+context\b(?!\s+(?:of|menu)\b)"
            r"|\b(?:what|everything|all|the text|the information)\s+I\s+(?:was|have been|am)\s+"
            r"(?:given|provided|shown|supplied)\b",
            re.IGNORECASE,
        ),
    ),
    # Internal material: playbooks, internal guides and docs, owner notes, "(internal)".
    (
        "internal-material",
        re.compile(
            r"\bplaybooks?\b|\bowner[ _]notes?\b|\brunbooks?\b|\badmin[- ]only\b"
            r"|\binternal[- ](?:only|use)\b|\(\s*internal\b[^)]{0,30}\)"
            r"|\binternal\s+(?:guides?|docs?|documents?|documentation|wiki|articles?|polic(?:y|ies)"
            r"|pages?|procedures?|knowledge(?:\s+base)?|materials?|sources?|manuals?"
            r"|handbooks?|entries|entry|instructions|rules)\b",
            re.IGNORECASE,
        ),
    ),
    # "this matrix", "that guide": a document the member was never shown.
    (
        "deictic-document",
        re.compile(rf"\b(?:this|that|these|those)\s+{_DOC_NOUN}\b", re.IGNORECASE),
    ),
    # "the sources are ...", "cited sources": the answer's own sources, which a member may not see.
    (
        "source-mention",
        re.compile(r"\b(?:the|these|those|cited|listed|my|our)\s+sources\b", re.IGNORECASE),
    ),
    # "according to .", "as noted in ,", ", cite and": a pointer whose marker was stripped.
    (
        "stripped-pointer",
        re.compile(
            rf"\b{_POINTER}(?=\s*(?:[.,;:!?)\]]|$))"
            r"|(?:^|(?<=[(,;:])|(?<=[.!?]\s))\s*(?:see|cite|cited)(?=\s*(?:[.,;:!?)]|$|and\b|or\b))",
            re.IGNORECASE | re.MULTILINE,
        ),
    ),
    # "Sources: ...", "References:", "Cited:", "Source link:" at the start of a line or sentence.
    (
        "source-list",
        re.compile(
            r"(?:^|(?:(?<=[.!?])|(?<=[.!?][\"'”’)]))\s+)[-*•]?\s*"
            r"(?:sources?|references?|citations?|cited|source links?"
            r"|bibliography|further reading)\s*:",
            re.IGNORECASE | re.MULTILINE,
        ),
    ),
)

_QUOTES = "\"'“”‘’*_«»"


@dataclass(frozen=True, slots=True)
class DanglingReference:
    """One pointer: the rule that found it and where it is in the text."""

    rule: str
    start: int
    end: int
    text: str


def _echoed_regions(text: str, own_words: Sequence[str]) -> list[tuple[int, int]]:
    """Where the member's own words (their question, whole or a sentence of it) are echoed."""
    lowered = text.lower()
    regions: list[tuple[int, int]] = []
    for own in own_words:
        pieces = [own, *re.split(r"(?<=[.!?])\s+", own)]
        for piece in pieces:
            piece = piece.strip().lower()
            if len(piece) < 20:
                continue
            start = lowered.find(piece)
            while start != -1:
                regions.append((start, start + len(piece)))
                start = lowered.find(piece, start + 1)
    return regions


def _quoted_titles(text: str, internal_titles: Iterable[str]) -> list[DanglingReference]:
    """Internal card titles written in quotes or emphasis: named sources a member cannot open."""
    found: list[DanglingReference] = []
    for title in internal_titles:
        title = title.strip()
        if len(title.split()) < 2:
            continue
        pattern = re.compile(
            rf"[{re.escape(_QUOTES)}]{{1,2}}\s*{re.escape(title)}\s*[.,]?\s*[{re.escape(_QUOTES)}]",
            re.IGNORECASE,
        )
        for m in pattern.finditer(text):
            found.append(DanglingReference("internal-title", m.start(), m.end(), m.group(0)))
    return found


def dangling_references(
    text: str, internal_titles: Iterable[str] = (), own_words: Sequence[str] = ()
) -> list[DanglingReference]:
    """Every dangling reference in ``text``, in order of position.

    ``internal_titles``: titles of internal cards (canaries stripped); quoted, they are named
    sources a member cannot open. ``own_words``: what the member wrote (their question); a
    pointer inside an echo of it is theirs, not the answer's.

    >>> [(r.rule, r.text) for r in dangling_references("As noted in the escalation playbook.")]
    [('internal-material', 'playbook')]
    >>> title = "Refund exceptions for annual plans"
    >>> [r.rule for r in dangling_references(f'See "{title}".', [title])]
    ['internal-title']
    """
    if not isinstance(text, str) or not text:
        return []
    found: list[DanglingReference] = []
    for rule, pattern in _RULES:
        for m in pattern.finditer(text):
            start, end = m.start(), m.end()
            span = m.group(0)
            # Leading whitespace or bullets belong to the layout, not to the pointer.
            stripped = span.lstrip(" \t\n-*•")
            start += len(span) - len(stripped)
            if end > start:
                found.append(DanglingReference(rule, start, end, text[start:end]))
    found += _quoted_titles(text, internal_titles)
    echoed = _echoed_regions(text, own_words)
    kept = [r for r in found if not any(a <= r.start and r.end <= b for a, b in echoed)]
    return sorted(kept, key=lambda r: (r.start, r.end, r.rule))


def has_dangling_reference(
    text: str, internal_titles: Iterable[str] = (), own_words: Sequence[str] = ()
) -> bool:
    """Whether ``text`` holds at least one dangling reference."""
    return bool(dangling_references(text, internal_titles, own_words))
