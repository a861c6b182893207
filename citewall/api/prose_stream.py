"""Turn a stream of generator deltas into marker-free prose deltas.

A marker can arrive split across deltas (``"[", "1", "]"``), so text after an unclosed ``[``,
``［`` or ``【`` is held back until it closes (or the stream ends), a last line that may be a
footnote definition (``[^1]: ...``) until it ends, and trailing whitespace is held back
because stripping a following marker may remove it. An unfinished tag (``<`` with no ``>``
yet) is held back too: how ``prose_only`` escapes it depends on what follows. What is emitted
is always a prefix of ``prose(everything so far)`` with no unclosed bracket left in it, so the
concatenation of emitted deltas is marker-free and tag-free; for plain prose (raw HTML
included) it ends equal to the final prose whatever the
split (Markdown code and link syntax can change later what counts as a marker: there the
``final`` event's answer is authoritative).
"""

from __future__ import annotations

import re
from collections.abc import Callable

_OPENERS = "[［【"
_CLOSERS = "]］】"
# A last line that may still be a reference or footnote definition (``[^1]: Refund policy``),
# which ``prose_only`` removes whole once the line is complete.
_DEFINITION_START = re.compile(r"(?:^|\n)[ \t]{0,3}[\[［【][^\]］】\n]+[\]］】](?::[^\n]*)?\Z")


_BACKTICKS = re.compile(r"`+")


def open_code_start(text: str) -> int | None:
    """Start of an unclosed backtick code span or fence, if the text ends inside one: a run
    of backticks opens one, the next run of the same length closes it."""
    return OpenCode()(text)


class OpenCode:
    """``open_code_start`` of a text that grows, scanning only what is new: call it with the
    text so far and it returns exactly ``open_code_start(text)``.

    The backtick runs of a prefix that does not end in a backtick are final (a later one can
    only start a new run), so the object keeps the open span of the longest such prefix seen
    and scans the rest. A text that does not extend that prefix is scanned from the start.
    """

    def __init__(self) -> None:
        self._scanned = ""
        self._opened: tuple[int, int] | None = None

    def __call__(self, text: str) -> int | None:
        if not text.startswith(self._scanned):
            self._scanned, self._opened = "", None
        # A run touching the end may still grow: the prefix kept ends before it.
        commit = len(text.rstrip("`"))
        opened = self._opened
        for run in _BACKTICKS.finditer(text, len(self._scanned), commit):
            length = run.end() - run.start()
            if opened is None:
                opened = (run.start(), length)
            elif opened[1] == length:
                opened = None
        self._scanned, self._opened = text[:commit], opened
        if commit < len(text):  # the trailing run, as open_code_start would read it
            if opened is None:
                opened = (commit, len(text) - commit)
            elif opened[1] == len(text) - commit:
                opened = None
        return opened[0] if opened else None


def safe_prefix_end(raw: str, open_code: Callable[[str], int | None] = open_code_start) -> int:
    """Length of the prefix of ``raw`` that later deltas cannot turn into (part of) a marker,
    nor change the meaning of (a bracket that may yet become a link, an unclosed code span).

    ``open_code`` finds an unclosed code span (``OpenCode()`` for a growing text reads only
    what is new). Every other rule reads only the end of the text: its last line, or back to
    the last bracket.
    """
    end = len(raw)
    # A definition holds no line break, so it can only start at the last one.
    if definition := _DEFINITION_START.search(raw, max(raw.rfind("\n"), 0)):
        end = definition.start()
    # A closed bracket at the very end may still become link text (``[1](https://...)``).
    if raw[end - 1 : end] in _CLOSERS:
        opener = max(raw.rfind(c, 0, end) for c in _OPENERS)
        end = opener if opener != -1 else end
    # ``[1](`` with the parenthesis still open may yet become a link: hold back from ``[``.
    link = max(raw.rfind(c + "(", 0, end) for c in _CLOSERS)
    if link != -1 and raw.count("(", link + 1, end) > raw.count(")", link + 1, end):
        opener = max(raw.rfind(c, 0, link) for c in _OPENERS)
        end = opener if opener != -1 else end
    # Hold back from the first opener after the last closer: nothing from there is closed.
    last_close = max(raw.rfind(c, 0, end) for c in _CLOSERS)
    unclosed = [i for i in (raw.find(c, last_close + 1, end) for c in _OPENERS) if i != -1]
    if unclosed:
        end = min(unclosed)
    # ``!`` may start an image and ``<`` an autolink: both change once the rest arrives.
    if raw[end - 1 : end] == "!":
        end -= 1
    angle = raw.rfind("<", 0, end)
    if angle != -1 and raw.find(">", angle, end) == -1:
        end = angle
    code = open_code(raw[:end])
    if code is not None:  # inside code, brackets are not markers: wait for the span to close
        end = code
    # Trailing whitespace may go with a marker stripped later. A ``<`` that ends the text is
    # escaped by ``prose_only`` (the same ``<`` followed by a space is not), so neither a
    # trailing ``<`` nor a trailing ``&lt;`` (in prose, it may be that ``<``) is final yet.
    while end > 0:
        if raw[end - 1].isspace() or raw[end - 1] == "<":
            end -= 1
        elif raw.endswith("&lt;", 0, end):
            end -= len("&lt;")
        else:
            break
    return end


class ProseStream:
    """Feed raw deltas, get prose deltas. ``prose`` is the member's view (``prose_only``, or
    ``IncrementalProse``: the same view, reading only the new text of a growing answer);
    ``open_code`` makes the code-span scanner of the hold-back rule (``OpenCode``, which reads
    only the new text, or ``lambda: open_code_start`` for the whole-text scan)."""

    def __init__(
        self,
        prose: Callable[[str], str],
        open_code: Callable[[], Callable[[str], int | None]] = OpenCode,
    ) -> None:
        self._prose = prose
        # One scanner per growing text (the raw answer, its prose).
        self._raw_code = open_code()
        self._prose_code = open_code()
        self._raw = ""
        self.emitted = ""
        #: The raw text (markers kept) that later deltas can no longer change: what the prose
        #: shown so far stands for, and what a stopped answer keeps.
        self.settled = ""

    def feed(self, delta: str) -> str:
        """Add a raw delta; return the prose that is now safe to show (may be empty)."""
        self._raw += delta
        self.settled = self._raw[: safe_prefix_end(self._raw, self._raw_code)]
        prose = self._prose(self.settled)
        # Stripping can leave an unclosed bracket (``[[1]`` -> ``[``) that later text turns
        # into a marker (``[[1]1]`` -> ``[1]`` -> ``""``): hold that back too.
        return self._advance(prose[: safe_prefix_end(prose, self._prose_code)])

    def finish(self, final_prose: str) -> str:
        """The last delta: whatever of ``final_prose`` (the served answer) is not yet shown.

        If the final answer is not an extension of what was shown (the pipeline rewrote the
        text), nothing more is emitted; the ``final`` event carries the authoritative answer.
        """
        return self._advance(final_prose)

    def _advance(self, prose: str) -> str:
        if len(prose) <= len(self.emitted) or not prose.startswith(self.emitted):
            return ""
        delta = prose[len(self.emitted) :]
        self.emitted = prose
        return delta
