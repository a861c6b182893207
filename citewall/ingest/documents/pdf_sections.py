"""A PDF's sections: by its outline (bookmarks) when it has one, else by groups of pages.

PDF text carries no heading marks, so the outline is the only structure a PDF states. Each
top-level outline entry starts a section at its page (entries on one page: the first wins); the
pages before the first entry are a section of their own. Without an outline, consecutive pages
are grouped up to ``MAX_WORDS``. A section over the cap is cut into page groups; then
``sections`` joins the small ones. A line ``Tell the member`` in a section starts its reply:
the text after it, to the section's end (a bookmark of that name: the section before it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from citewall.ingest.documents.sections import (
    MAX_WORDS,
    MIN_WORDS,
    AnchoredSection,
    Section,
    cap_sections,
    finish,
    is_reply_heading,
    join_replies,
    merge_small,
)


def _words(text: str) -> int:
    return len(text.split())


def _groups(pages: Sequence[str], start: int, end: int, max_words: int) -> list[tuple[int, int]]:
    """Pages ``[start, end)`` packed greedily into runs of at most ``max_words`` (a page over
    the cap is a run alone); runs as 0-based ``[first, stop)``."""
    runs: list[tuple[int, int]] = []
    first, count = start, 0
    for i in range(start, end):
        words = _words(pages[i])
        if i > first and count + words > max_words:
            runs.append((first, i))
            first, count = i, 0
        count += words
    if end > start:
        runs.append((first, end))
    return runs


def _section(pages: Sequence[str], start: int, stop: int, heading: str | None) -> Section:
    body = "\n\n".join(p.strip() for p in pages[start:stop] if p.strip())
    lines = body.splitlines()
    at = next((i for i, line in enumerate(lines) if is_reply_heading(line)), None)
    if at is None:
        return Section(heading, body, pages=(start + 1, stop))
    reply = "\n".join(lines[at + 1 :]).strip() or None
    return Section(heading, "\n".join(lines[:at]).strip(), pages=(start + 1, stop), reply=reply)


def _fold_replies(sections: Sequence[Section]) -> list[Section]:
    """A section bookmarked ``Tell the member`` is the reply of the section before it."""
    out: list[Section] = []
    for section in sections:
        if out and section.heading is not None and is_reply_heading(section.heading):
            reply = join_replies(out[-1].reply, section.body, section.reply)
            out[-1] = replace(out[-1], reply=reply)
        else:
            out.append(section)
    return out


def _starts(outline: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    """Outline entries by page, one per page (the first in outline order)."""
    seen: dict[int, str] = {}
    for title, page in outline:
        seen.setdefault(page, title)
    return sorted(((t, p) for p, t in seen.items()), key=lambda e: e[1])


def pdf_sections(
    pages: Sequence[str],
    outline: Sequence[tuple[str, int]],
    *,
    max_words: int = MAX_WORDS,
    min_words: int = MIN_WORDS,
) -> list[AnchoredSection]:
    """Sections of a PDF's pages (see the module docstring).

    >>> [(a.anchor, a.section.label) for a in pdf_sections(["a " * 400, "b " * 400], [])]
    [('page-1', 'page 1'), ('page-2', 'page 2')]
    """
    if sum(_words(p) for p in pages) <= max_words:
        return finish([_section(pages, 0, len(pages), None)])
    starts = _starts(outline)
    spans: list[tuple[str | None, int, int]] = []
    if starts and starts[0][1] > 0:
        spans.append((None, 0, starts[0][1]))
    for i, (title, page) in enumerate(starts):
        spans.append((title, page, starts[i + 1][1] if i + 1 < len(starts) else len(pages)))
    if not starts:
        spans.append((None, 0, len(pages)))
    sections: list[Section] = []
    for heading, start, stop in spans:
        for n, (first, end) in enumerate(_groups(pages, start, stop, max_words)):
            section = _section(pages, first, end, heading)
            if heading is not None and n > 0:
                section = replace(section, heading=f"{heading} ({section.page_label})")
            sections.append(section)
    kept = [s for s in _fold_replies(sections) if s.body]
    return finish(cap_sections(merge_small(kept, min_words), max_words))
