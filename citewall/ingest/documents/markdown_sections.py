"""Split Markdown (a Markdown file, or HTML and DOCX converted to it) at its headings.

Headings are found by markdown-it-py's CommonMark parser, so ``#`` lines in code blocks, setext
headings and headings inside lists are told apart as a renderer would. A document of at most
``MAX_WORDS`` words is one card. A longer one is cut at H1 and H2; a section still over the cap
is cut at its H3s; then ``sections`` joins the small ones and cuts what is still too long.

A ``Tell the member`` heading (any level) starts an internal card's member-facing part: its text,
up to the next heading of the same level or above, is taken out of the body and becomes the
reply of the section it follows (``take_reply`` does the same for a Markdown card).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from markdown_it import MarkdownIt
from markdown_it.token import Token

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

#: Headings at this level or above start a card; deeper ones only in a section over the cap.
SPLIT_LEVEL = 2

_PARSER = MarkdownIt("commonmark")


@dataclass(frozen=True, slots=True)
class Heading:
    """A top-level heading: its level (1-6), text and lines ``[start, end)`` in the source."""

    level: int
    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class SplitMarkdown:
    """The sections of a Markdown document and its title (the one given, else its first
    heading when that is an H1, else None)."""

    title: str | None
    sections: list[AnchoredSection]


def _inline_text(token: Token) -> str:
    """A heading's words without Markdown: emphasis and link syntax dropped, code kept."""
    parts = []
    for child in token.children or []:
        if child.type in {"text", "code_inline"}:
            parts.append(child.content)
        elif child.type in {"softbreak", "hardbreak"}:
            parts.append(" ")
    return " ".join("".join(parts).split())


def headings(markdown: str) -> list[Heading]:
    """The document's top-level headings, in order.

    >>> [(h.level, h.text) for h in headings("# A *b*\\n\\n```\\n# no\\n```\\n\\nC\\n---\\n")]
    [(1, 'A b'), (2, 'C')]
    """
    tokens = _PARSER.parse(markdown)
    out: list[Heading] = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.level == 0 and token.map is not None:
            start, end = token.map
            out.append(Heading(int(token.tag[1:]), _inline_text(tokens[i + 1]), start, end))
    return out


@dataclass(frozen=True, slots=True)
class ReplyPart:
    """A ``Tell the member`` section: its text and its lines ``[start, end)`` in the source."""

    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class ReplySplit:
    """Markdown with its ``Tell the member`` sections taken out: the rest, and their text
    (None when there is none) with the 0-based line of the first one's heading."""

    body: str
    reply: str | None
    line: int | None


def reply_parts(markdown: str) -> list[ReplyPart]:
    """The ``Tell the member`` sections of ``markdown``, in order; each runs to the next heading
    of its level or above (so a ``### Note`` inside it stays in it)."""
    lines = markdown.splitlines()
    heads = headings(markdown)
    out: list[ReplyPart] = []
    for i, head in enumerate(heads):
        if not is_reply_heading(head.text) or (out and head.start < out[-1].end):
            continue
        end = next((h.start for h in heads[i + 1 :] if h.level <= head.level), len(lines))
        out.append(ReplyPart(_text(lines, head.end, end), head.start, end))
    return out


def _without(lines: list[str], parts: list[ReplyPart]) -> list[str]:
    """``lines`` with the reply parts blanked, so every other line keeps its number."""
    taken = {n for p in parts for n in range(p.start, p.end)}
    return ["" if n in taken else line for n, line in enumerate(lines)]


def _joined(parts: list[ReplyPart]) -> str | None:
    return "\n\n".join(p.text for p in parts if p.text) or None


def take_reply(markdown: str) -> ReplySplit:
    """Split a card's Markdown body into the staff body and the member-facing reply.

    >>> split = take_reply("Log it in Helm.\\n\\n## Tell the member\\n\\nA credit is on its way.")
    >>> split.body, split.reply, split.line
    ('Log it in Helm.', 'A credit is on its way.', 2)
    """
    parts = reply_parts(markdown)
    if not parts:
        return ReplySplit(markdown, None, None)
    body = "\n".join(_without(markdown.splitlines(), parts)).strip()
    return ReplySplit(body, _joined(parts), parts[0].start)


def _text(lines: list[str], start: int, end: int) -> str:
    return "\n".join(lines[start:end]).strip()


def _spans(
    heads: list[Heading], start: int, end: int, level: int
) -> list[tuple[str | None, int, int]]:
    """``[start, end)`` cut at its headings of ``level`` or above: (heading, first line, end)
    for the text before the first of them (heading None), then one per heading."""
    cuts = [h for h in heads if start <= h.start < end and h.level <= level]
    out: list[tuple[str | None, int, int]] = [(None, start, cuts[0].start if cuts else end)]
    for i, head in enumerate(cuts):
        out.append((head.text, head.end, cuts[i + 1].start if i + 1 < len(cuts) else end))
    return out


def _one_card_body(lines: list[str], title_heading: Heading | None) -> str:
    """The whole text; the title heading is the card's title, not a line of its text."""
    if title_heading is None:
        return _text(lines, 0, len(lines))
    before = _text(lines, 0, title_heading.start)
    after = _text(lines, title_heading.end, len(lines))
    return "\n\n".join(part for part in (before, after) if part)


def split_markdown(
    markdown: str,
    *,
    title: str | None = None,
    max_words: int = MAX_WORDS,
    min_words: int = MIN_WORDS,
) -> SplitMarkdown:
    """Sections of ``markdown`` (see the module docstring).

    ``title`` is the title the document states elsewhere (HTML ``<title>``, DOCX core title).
    A first heading that is an H1 and matches it (or there is none) is the title heading: it
    names the document, so the text under it is the document's lead, not a section of its own.

    >>> doc = split_markdown("# Guide\\n\\nShort guide.")
    >>> doc.title, [(a.anchor, a.section.body) for a in doc.sections]
    ('Guide', [(None, 'Short guide.')])
    """
    replies = reply_parts(markdown)
    lines = _without(markdown.splitlines(), replies)
    markdown = "\n".join(lines)
    heads = headings(markdown)
    first = heads[0] if heads and heads[0].level == 1 else None
    title_head = first if first is not None and title in {None, first.text} else None
    title = title or (first.text if first is not None else None)
    heading_lines = {n for h in heads for n in range(h.start, h.end)}
    if not any(line.strip() for n, line in enumerate(lines) if n not in heading_lines):
        return SplitMarkdown(title, [])  # only headings: nothing to answer from
    if len(markdown.split()) <= max_words:
        whole = Section(None, _one_card_body(lines, title_head), reply=_joined(replies))
        return SplitMarkdown(title, finish([whole]))

    def section(name: str | None, start: int, end: int) -> Section:
        inside = [p for p in replies if start <= p.start < end]
        return Section(name, _text(lines, start, end), reply=_joined(inside))

    sections: list[Section] = []
    for heading, start, end in _spans(heads, 0, len(lines), SPLIT_LEVEL):
        name = None if title_head is not None and start == title_head.end else heading
        if len(_text(lines, start, end).split()) <= max_words:
            sections.append(section(name, start, end))
            continue
        for sub, sub_start, sub_end in _spans(heads, start, end, SPLIT_LEVEL + 1):
            full = sub if name is None else name if sub is None else f"{name} / {sub}"
            sections.append(section(full, sub_start, sub_end))
    sections = _drop_empty(sections)
    return SplitMarkdown(title, finish(cap_sections(merge_small(sections, min_words), max_words)))


def _drop_empty(sections: list[Section]) -> list[Section]:
    """Without sections that have no text of their own (a heading straight above another): not
    cards. Their reply, if any, goes to the section before (or, for the first, the next)."""
    kept: list[Section] = []
    pending: list[str] = []
    for s in sections:
        if not s.body:
            if s.reply:
                if kept:
                    kept[-1] = replace(kept[-1], reply=join_replies(kept[-1].reply, s.reply))
                else:
                    pending.append(s.reply)
            continue
        if pending:
            s = replace(s, reply=join_replies(*pending, s.reply))
            pending = []
        kept.append(s)
    return kept
