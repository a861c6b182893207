"""The outline of a card body: sections, lists, tab labels, and the units an answer may quote.

Help articles are built from headings that name a case ("Deactivate your account", "Delete
your account"), tab labels that name a variant (``**Desktop/Web:**``, ``**Mobile:**``),
numbered steps and paragraphs. An answer quotes *units*: a whole sentence of a paragraph or a
whole list item, never a piece of one. A list item is one unit however many sentences it holds
("Click the **help** (?) icon ..." is one step, not two fragments), and a paragraph is split
into sentences only where the next piece starts like a sentence (not with a lower-case word).

A unit's text is its source with the Markdown syntax removed and the words kept exactly:
emphasis marks, code ticks, heading hashes, list bullets and numbers, ``[n]`` markers, images,
and the target of a link to a web page (``[role](https://...)`` is the word "role"). Other
links (``javascript:``, ``mailto:``) and HTML are left as written, so the answerer's safety
filter still sees (and skips) them. Code blocks, tables and list items that are only a link
(navigation) yield no units.

>>> body = "## Set up\\n\\n**Desktop:**\\n\\n1. Go to **Settings**.\\n2. Save."
>>> [u.text for u in outline(body).units]
['Go to Settings.', 'Save.']
>>> u = outline(body).units[0]
>>> (u.kind, u.heading, u.tab)
('step', 'Set up', 'Desktop')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from citewall.citations.markers import strip_markers
from citewall.citations.sentences import split_sentences

UnitKind = Literal["sentence", "step", "item"]

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^(\s*)([-*+]|\d{1,3}[.)])\s+(.*)$")
#: A line that is only a bold label ending in a colon: ``**Desktop/Web:**``, ``**Mobile**:``.
_LABEL = re.compile(r"^\s*(?:\*\*|__)([^*_\n]{1,60}?)(?::(?:\*\*|__)|(?:\*\*|__):)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SKIPPED_LINE = re.compile(r"^\s*(\||:::|!!!|\{%|---+\s*$|===+\s*$|<!--)")
#: Emphasis opens and closes at a word's edge: ``pk_live_`` and ``PARCELRY*SUB`` keep their marks.
_EMPHASIS = re.compile(r"(?<![\w*_])(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1(?![\w*_])")
_CODE = re.compile(r"`+([^`]*)`+")
_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\s]*\)")
#: A link to a web page or a page of the same site: only its words are kept.
#: A unit that is only a link (a "Related articles" entry) is navigation, not content.
_ONLY_LINK = re.compile(r"^\s*\[[^\]\n]*\]\([^)\s]*\)[.,;]?\s*$")
_LINK = re.compile(r"\[([^\]\n]+)\]\((?:https?://|/|#)[^)\s]*\)")


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and what follows it up to the next heading of any level (index 0: the text
    before the first heading, with an empty heading)."""

    index: int
    heading: str
    level: int


@dataclass(frozen=True, slots=True)
class Unit:
    """One quotable unit, in reading order (``position``) within its outline.

    ``kind`` is ``step`` for an item of a numbered list, ``item`` for a bulleted one.
    ``list_index`` groups the items of one list (None for sentences); ``tab`` is the label the
    unit sits under within its section (``"Mobile"``), None before any label.
    """

    text: str
    kind: UnitKind
    section: int
    heading: str
    tab: str | None
    list_index: int | None
    position: int


@dataclass(frozen=True, slots=True)
class Outline:
    sections: tuple[Section, ...]
    units: tuple[Unit, ...]


def plain(text: str) -> str:
    """``text`` without emphasis marks, code ticks, images, web links' targets and ``[n]``
    markers, whitespace collapsed.

    >>> plain("Toggle **`Enter` sends** [2] for a [role](https://x.example/r).")
    'Toggle Enter sends for a role.'
    >>> plain("Keys start with pk_live_ or `pk_test_`; it reads PARCELRY*SUB or PARCELRY*POSTAGE.")
    'Keys start with pk_live_ or pk_test_; it reads PARCELRY*SUB or PARCELRY*POSTAGE.'
    """
    s = strip_markers(text)
    s = _LINK.sub(r"\1", _IMAGE.sub("", s))
    # A code span's text is kept as written: it stands aside (a private-use placeholder) while
    # the text around it loses its emphasis marks.
    spans: list[str] = []

    def aside(match: re.Match[str]) -> str:
        spans.append(match.group(1))
        return f"\ue000{len(spans) - 1}\ue001"

    s = _CODE.sub(aside, s)
    for _ in range(3):  # nested emphasis: ***x***, **_x_**
        s = _EMPHASIS.sub(r"\2", s)
    s = re.sub("\ue000(\\d+)\ue001", lambda m: spans[int(m.group(1))], s)
    return " ".join(s.split())


def _sentences(paragraph: str) -> list[str]:
    """The sentences of one paragraph; a piece starting in lower case joins the one before
    (the splitter cut after "(?)" or "..." inside a sentence)."""
    out: list[str] = []
    for piece in split_sentences(paragraph):
        if out and piece[0].islower():
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


class _Builder:
    def __init__(self) -> None:
        self.sections: list[Section] = [Section(0, "", 0)]
        self.units: list[Unit] = []
        self.tab: str | None = None
        self.list_index: int | None = None
        self.lists = 0

    def heading(self, level: int, text: str) -> None:
        self.sections.append(Section(len(self.sections), plain(text), level))
        self.tab = None
        self.list_index = None

    def label(self, text: str) -> None:
        self.tab = plain(text).rstrip(":").strip() or None
        self.list_index = None

    def add(self, text: str, kind: UnitKind) -> None:
        cleaned = plain(text)
        if not cleaned or _ONLY_LINK.match(text):
            return
        section = self.sections[-1]
        self.units.append(
            Unit(
                text=cleaned,
                kind=kind,
                section=section.index,
                heading=section.heading,
                tab=self.tab,
                list_index=self.list_index if kind != "sentence" else None,
                position=len(self.units),
            )
        )

    def paragraph(self, lines: list[str]) -> None:
        if lines:
            self.list_index = None
            for sentence in _sentences(" ".join(line.strip() for line in lines)):
                self.add(sentence, "sentence")

    def item(self, ordered: bool, lines: list[str], new_list: bool) -> None:
        if new_list or self.list_index is None:
            self.list_index = self.lists
            self.lists += 1
        self.add(" ".join(line.strip() for line in lines), "step" if ordered else "item")


def outline(text: str) -> Outline:
    """The sections and quotable units of a card body (Markdown or plain text).

    Linear in the length of ``text``; never raises.
    """
    b = _Builder()
    paragraph: list[str] = []
    item: list[str] = []
    item_ordered = False
    item_indent = 0
    previous_kind: tuple[bool, int] | None = None  # (ordered, indent) of the last item
    in_fence = False

    def flush() -> None:
        nonlocal paragraph, item, previous_kind
        if item:
            kind = (item_ordered, item_indent)
            b.item(item_ordered, item, new_list=previous_kind != kind)
            previous_kind = kind
            item = []
        if paragraph:
            b.paragraph(paragraph)
            previous_kind = None
            paragraph = []

    for line in text.splitlines():
        if _FENCE.match(line):
            flush()
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if not line.strip():
            if paragraph or item:
                flush()
            continue
        if (m := _HEADING.match(line)) is not None:
            flush()
            previous_kind = None
            b.heading(len(m.group(1)), m.group(2))
            continue
        if (m := _LABEL.match(line)) is not None:
            flush()
            previous_kind = None
            b.label(m.group(1))
            continue
        if _SKIPPED_LINE.match(line) or line.lstrip().startswith(">"):
            flush()
            continue
        if (m := _ITEM.match(line)) is not None and not (paragraph and m.group(2)[0].isdigit()):
            flush()
            item = [m.group(3)]
            item_ordered = m.group(2)[0].isdigit()
            item_indent = len(m.group(1).expandtabs(4)) // 2
            continue
        if item and (not paragraph):
            item.append(line)  # a wrapped or indented continuation of the item
            continue
        paragraph.append(line)
    flush()
    return Outline(tuple(b.sections), tuple(b.units))
