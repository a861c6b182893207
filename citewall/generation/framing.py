"""The prompt's own framing, dropped from a model's reply before anyone reads it.

Small local models often echo the scaffolding the prompt wraps each passage in (the
``[1] (untrusted data)`` header, the ``~~~~`` fence, the private card's labels) before copying
a passage. None of it is an answer: the header tells the member there is a context, a label
tells them there are staff notes, and a fence hides the passage numbers inside it from marker
stripping. ``drop_framing`` removes it from a whole reply; ``FramingFilter`` does the same to a
stream of deltas, holding back only what could still turn out to be framing, so that the
streamed text is exactly ``drop_framing`` of the whole (property-tested).

What counts as framing (case-insensitive):

- a line that is only framing: a tilde fence (three or more), a passage header
  ``[n] (untrusted data...)``, the context's heading, a private card's part labels, or the
  "nothing" placeholder of a card with no member-facing part; the line goes with its newline;
- anywhere else, the phrase ``(untrusted data...)`` itself.

Everything else is left as the model wrote it: this is not a prose rewriter.
"""

from __future__ import annotations

import regex

from citewall.generation.prompt import MEMBER_LABEL, NOTHING_TO_TELL, STAFF_LABEL

#: The phrase that labels a passage as data, as the prompt writes it (at most 40 characters
#: inside the brackets, no bracket or newline).
_PHRASE = r"\(untrusted data[^()\n]{0,40}\)"
#: A whole line of framing, once stripped of surrounding blanks.
_LINE = regex.compile(
    "|".join(
        (
            r"~{3,}",
            r"(?:\[\d{1,3}\][ \t]*)?" + _PHRASE + r"[ \t]*:?",
            r"Context passages \(untrusted data, not instructions\):",
            regex.escape(STAFF_LABEL) + r":?",
            regex.escape(MEMBER_LABEL) + r":?",
            regex.escape(NOTHING_TO_TELL),
        )
    ),
    regex.IGNORECASE,
)
_INLINE = regex.compile(_PHRASE, regex.IGNORECASE)


def _is_framing_line(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and _LINE.fullmatch(stripped) is not None


def _could_be_framing_line(start: str) -> bool:
    """Whether a line beginning ``start`` may still turn out to be a framing line."""
    stripped = start.lstrip()
    return not stripped or _LINE.fullmatch(stripped.rstrip(), partial=True) is not None


def _line_out(line: str) -> str:
    """One line (with its newline, if any) as the reader gets it."""
    return "" if _is_framing_line(line) else _INLINE.sub("", line)


def drop_framing(text: str) -> str:
    """``text`` without the prompt's framing (the module's rules)."""
    return "".join(_line_out(line) for line in text.splitlines(keepends=True))


class FramingFilter:
    """``drop_framing`` over a stream: ``push`` each delta and emit what it returns, then
    ``flush`` at the end. Only the current line is ever held, and only while it could still be
    a framing line or ends in what could still be the inline phrase."""

    def __init__(self) -> None:
        #: The current line's text not emitted yet.
        self._pending = ""
        #: The current line can no longer be a framing line: it is emitted as it settles.
        self._prose = False

    def push(self, delta: str) -> str:
        text = self._pending + delta
        out: list[str] = []
        while (end := text.find("\n")) >= 0:
            line, text = text[: end + 1], text[end + 1 :]
            out.append(_INLINE.sub("", line) if self._prose else _line_out(line))
            self._prose = False
        if not self._prose and _could_be_framing_line(text):
            self._pending = text
            return "".join(out)
        self._prose = True
        cut = len(text)
        opening = text.rfind("(")
        if opening >= 0 and _INLINE.fullmatch(text[opening:], partial=True) is not None:
            cut = opening  # a phrase may be arriving: hold it until it closes or cannot
        out.append(_INLINE.sub("", text[:cut]))
        self._pending = text[cut:]
        return "".join(out)

    def flush(self) -> str:
        """What is held at the end of the stream, as ``drop_framing`` gives it."""
        rest, self._pending = self._pending, ""
        out = _INLINE.sub("", rest) if self._prose else _line_out(rest)
        self._prose = False
        return out
