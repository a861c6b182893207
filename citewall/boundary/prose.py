"""Prose-only answers for members: the stored content keeps its ``[n]`` markers, members don't
see them (decision 0002, docs/decisions/0002-external-only-citations.md: inline anchors would
number internal sources too).

Model text never becomes a link (decision 0003, docs/decisions/0003-data-path-contracts.md):
besides the web UI's renderer, which makes no anchors from answer text, the server turns
Markdown link, image and autolink syntax into plain text, so a client that renders the answer
as Markdown cannot make a link from it either. The URL a model wrote may remain as plain text.

Raw HTML is made inert by escaping, not by removing tags: every ``<`` that could open markup
(a tag, an end tag, a comment, a declaration or a processing instruction) becomes ``&lt;``.
Escaping loses nothing the model wrote (``a<b`` or "the ``<br>`` tag" keep their words), it is
decided by the one character after ``<`` (so a stream holds back at most the ``<`` being typed),
and every Markdown renderer, HTML enabled or not, shows ``&lt;`` as ``<``. It applies inside code
spans too: a client's idea of where code starts may differ from ours (a backslash-escaped
backtick), and a tag is inert only if no parser can see one.
"""

from __future__ import annotations

import re

from citewall.citations.markers import strip_markers
from citewall.citations.regions import fold
from citewall.text.cleaning import clean_text

# ``![alt](target)`` -> ``alt``; ``[text](target)`` -> ``text``; ``<https://x>`` -> ``https://x``.
# Targets may hold one level of balanced parentheses (``(https://a.example/x_(y))``).
_TARGET = r"\((?:[^()\n]|\([^()\n]*\))*\)"
# Link text may hold balanced brackets one level deep (``[a[1]](https://x)`` is a link).
_TEXT = r"\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
_IMAGE = re.compile(r"!" + _TEXT + _TARGET)
_LINK = re.compile(_TEXT + _TARGET)
_REFERENCE_DEF = re.compile(r"(?m)^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*\S+.*$")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto|javascript|data|vbscript|file):[^<>\s]*)>", re.I)
# What an HTML parser (and CommonMark's raw HTML) opens markup with: ``<`` before an ASCII letter,
# ``/``, ``!`` or ``?``. A ``<`` that ends the text is escaped too, so that text a client places
# after the answer cannot complete a tag.
_MARKUP_OPEN = re.compile(r"<(?=[A-Za-z/!?]|\Z)")


def defang_links(text: str) -> str:
    """Markdown links, images, reference definitions and autolinks as plain text.

    >>> defang_links("See [the docs](https://evil.example) ![x](https://evil.example/p.png)")
    'See the docs x'
    """
    text = _IMAGE.sub(lambda m: m.group(1), text)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _REFERENCE_DEF.sub("", text)
    return _AUTOLINK.sub(lambda m: m.group(1), text)


def inert_html(text: str) -> str:
    """Every ``<`` that could open HTML markup, as the entity ``&lt;``.

    >>> inert_html('<img src=x onerror=alert(1)> and 1 < 2 </b>')
    '&lt;img src=x onerror=alert(1)> and 1 < 2 &lt;/b>'
    """
    return _MARKUP_OPEN.sub("&lt;", text)


def prose_only(text: str) -> str:
    """The answer as a member sees it: markers removed, no Markdown link syntax, HTML inert
    (``inert_html``), no control or invisible formatting characters (``clean_text``; a stored
    row may predate the cleaning).

    >>> prose_only("Refunds take 5 days [1]. Ask billing 【2†source】[^3].")
    'Refunds take 5 days. Ask billing.'
    >>> prose_only('See <a href="https://evil.example">the form</a> [1].')
    'See &lt;a href="https://evil.example">the form&lt;/a>.'
    """
    if not isinstance(text, str):
        return ""
    # Definitions first: ``[^1]: Refund policy`` is a footnote, not a claim with a marker in it.
    text = _REFERENCE_DEF.sub("", clean_text(text))
    # Each pass can uncover the other's syntax (``[[1](x)]``: the link's text becomes ``[1]``;
    # ``[a[1]](x)``: without the marker, a link): repeat until neither changes anything. Every
    # pass that changes the text shortens it, so this ends.
    while True:
        plain = defang_links(strip_markers(text))
        if plain == text:
            break
        text = plain
    return inert_html(text)


class IncrementalProse:
    """``prose_only`` of a text that grows, reading only what is new: call it with the text so
    far and it returns exactly ``prose_only(text)``.

    Every rule of ``prose_only`` stays within a line (markers, links, definitions, the escaping
    of ``<``), but for code: an inline code span or a fence can join lines. So a text that ends
    with a line break and holds no backtick and no ``~~~`` (after ``fold``) is done: what any
    continuation makes of the whole is its prose followed by the continuation's. The object
    keeps the prose of the longest such prefix and re-reads only the text after it. After a
    backtick or ``~~~`` it re-reads from there on every call; a text that does not extend the
    last one starts again from nothing.
    """

    def __init__(self) -> None:
        self._done_raw = ""
        self._done_prose = ""
        self._blocked = False

    def __call__(self, text: str) -> str:
        if not text.startswith(self._done_raw):
            self._done_raw, self._done_prose, self._blocked = "", "", False
        rest = text[len(self._done_raw) :]
        if not self._blocked:
            cut = rest.rfind("\n") + 1
            if cut:
                finished = rest[:cut]
                folded = fold(finished)
                if "`" in folded or "~~~" in folded:
                    self._blocked = True
                else:
                    self._done_raw += finished
                    self._done_prose += prose_only(finished)
                    rest = rest[cut:]
        return self._done_prose + prose_only(rest)
