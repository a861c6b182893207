"""A document's sections: what one card holds, sized for answering a question from it.

Headings (``markdown_sections``) or a PDF's outline and pages (``pdf_sections``) cut a document
into sections; this module then evens them out. A section shorter than ``MIN_WORDS`` joins its
neighbour (a heading with two lines under it is not worth a card of its own), and one longer
than ``MAX_WORDS`` is cut into parts at paragraph breaks, so every card stays about one topic.
``ingest/chunking.py`` later cuts each card into chunks of ``chunk_max_words`` for the indexes;
a section is the unit a citation names and the exposure budget counts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from citewall.ingest.documents.ids import anchors

#: A document this short is one card; a longer section is cut into parts.
MAX_WORDS = 600
#: A section shorter than this joins its neighbour.
MIN_WORDS = 40

_PARAGRAPHS = re.compile(r"\n\s*\n")

#: The heading of an internal card's member-facing part (its reply), compared case-folded
#: without a trailing colon: ``## Tell the member`` in Markdown, a line of its own in a PDF.
REPLY_HEADING = "tell the member"


@dataclass(frozen=True, slots=True)
class Section:
    """A piece of a document: its heading (None for text before the first heading, or a page
    group), its text, for PDFs the pages it spans (1-based, inclusive), and the member-facing
    reply its ``Tell the member`` part holds (None without one)."""

    heading: str | None
    body: str
    pages: tuple[int, int] | None = None
    reply: str | None = None

    @property
    def words(self) -> int:
        return len(self.body.split())

    @property
    def page_label(self) -> str | None:
        """``page 3`` or ``pages 3-5`` for a PDF section, else None."""
        if self.pages is None:
            return None
        first, last = self.pages
        return f"page {first}" if first == last else f"pages {first}-{last}"

    @property
    def label(self) -> str | None:
        """What the section is called: its heading, else its pages, else None (the lead)."""
        return self.heading if self.heading is not None else self.page_label


@dataclass(frozen=True, slots=True)
class AnchoredSection:
    """A final section with its anchor (None when the whole document is one card)."""

    section: Section
    anchor: str | None


def _span(a: tuple[int, int] | None, b: tuple[int, int] | None) -> tuple[int, int] | None:
    if a is None or b is None:
        return a or b
    return (min(a[0], b[0]), max(a[1], b[1]))


def _join(first: Section, second: Section, *, keep: Section) -> Section:
    """``first``'s text then ``second``'s, under ``keep``'s heading; the other heading stays in
    the text as a line."""
    parts = [
        f"## {s.heading}\n\n{s.body}" if s.heading and s is not keep else s.body
        for s in (first, second)
    ]
    body = "\n\n".join(p for p in parts if p.strip())
    reply = join_replies(first.reply, second.reply)
    return replace(keep, body=body, pages=_span(first.pages, second.pages), reply=reply)


def is_reply_heading(text: str) -> bool:
    """Does a heading (or a PDF line) open the member-facing part?

    >>> is_reply_heading("Tell the member:"), is_reply_heading("Telling the member")
    (True, False)
    """
    return text.strip().rstrip(":").strip().casefold() == REPLY_HEADING


def join_replies(*replies: str | None) -> str | None:
    """The replies given, in order, as one (None when there is none).

    >>> join_replies(None, "A.", "B."), join_replies(None)
    ('A.\\n\\nB.', None)
    """
    return "\n\n".join(r for r in replies if r) or None


def merge_small(sections: Sequence[Section], min_words: int = MIN_WORDS) -> list[Section]:
    """Join each section under ``min_words`` to the one before it; a short first section (an
    introduction) goes in front of the next one, under the next one's heading.

    >>> merged = merge_small([Section(None, "Intro."), Section("B", "x " * 50), Section("C", "c")])
    >>> [(s.heading, s.words) for s in merged]
    [('B', 54)]
    """
    out: list[Section] = []
    for section in sections:
        if out and out[-1].words < min_words:
            # Only the first section can still be short here.
            out[-1] = _join(out[-1], section, keep=section)
        elif out and section.words < min_words:
            out[-1] = _join(out[-1], section, keep=out[-1])
        else:
            out.append(section)
    return out


def _pack(text: str, max_words: int) -> list[str]:
    """Paragraphs packed into pieces of at most ``max_words``; a longer paragraph is cut."""
    pieces: list[str] = []
    current: list[str] = []
    count = 0
    for para in _PARAGRAPHS.split(text.strip()):
        words = para.split()
        if current and count + len(words) > max_words:
            pieces.append("\n\n".join(current))
            current, count = [], 0
        if len(words) > max_words:
            pieces += [" ".join(words[i : i + max_words]) for i in range(0, len(words), max_words)]
        elif words:
            current.append(para.strip())
            count += len(words)
    if current:
        pieces.append("\n\n".join(current))
    return pieces


def cap_sections(sections: Sequence[Section], max_words: int = MAX_WORDS) -> list[Section]:
    """Cut each section over ``max_words`` into parts; part 1 keeps the section's heading.

    >>> parts = cap_sections([Section("Steps", "a b c\\n\\nd e f")], max_words=3)
    >>> [(p.label, p.body) for p in parts]
    [('Steps', 'a b c'), ('Steps (part 2)', 'd e f')]
    """
    out: list[Section] = []
    for section in sections:
        if section.words <= max_words:
            out.append(section)
            continue
        label = section.label
        for n, body in enumerate(_pack(section.body, max_words), start=1):
            if n == 1:
                out.append(replace(section, body=body))
            else:  # the reply stays with part 1, which keeps the section's heading
                heading = f"{label} (part {n})" if label else f"part {n}"
                out.append(replace(section, heading=heading, body=body, reply=None))
    return out


def finish(sections: Sequence[Section]) -> list[AnchoredSection]:
    """Sections with anchors: none when one section is the whole document.

    >>> [a.anchor for a in finish([Section(None, "x"), Section("Steps", "y")])]
    ['top', 'steps']
    """
    kept = [s for s in sections if s.body.strip()]
    if len(kept) == 1:
        return [AnchoredSection(kept[0], None)]
    names = anchors([s.label for s in kept])
    return [AnchoredSection(s, a) for s, a in zip(kept, names, strict=True)]
