"""Cleaning untrusted text: what storage can hold, and what a reader may be shown.

Two levels, both pure and total (any ``str`` in, a valid ``str`` out, never an exception):

- ``encodable``: what every database, JSON encoder and UTF-8 response can hold. A Python string
  may carry lone surrogates (``json.loads('"\\ud800"')``, ``sys.argv`` with undecodable bytes)
  that no UTF-8 encoder accepts, and NUL, which PostgreSQL refuses in text and JSONB. Surrogate
  pairs written as two code units are joined into the character they encode; a lone surrogate
  becomes U+FFFD; NUL is removed.
- ``clean_text``: ``encodable`` and also no control characters (C0 but tab, line feed and
  carriage return; DEL; C1) and no invisible formatting characters (bidirectional overrides and
  isolates, zero-width characters, tag characters). These can reorder what a reader sees
  ("Trojan Source") or hide text from them, so none reaches an answer, a title or an excerpt.

>>> encodable("a\\ud800b\\x00c")
'a�bc'
>>> clean_text("pay\\u202eli.exe\\u200b now\\x07")
'payli.exe now'
"""

from __future__ import annotations

from collections.abc import Iterable

#: NUL: no database citewall supports stores it in text.
_NUL = "\x00"

#: Invisible formatting characters that change how text reads without being seen.
INVISIBLE_RANGES: tuple[tuple[int, int], ...] = (
    (0x061C, 0x061C),  # Arabic letter mark (a bidirectional mark)
    (0x180E, 0x180E),  # Mongolian vowel separator (zero width)
    (0x200B, 0x200F),  # zero-width space, non-joiner, joiner; left-to-right / right-to-left mark
    (0x202A, 0x202E),  # bidirectional embeddings and overrides
    (0x2060, 0x2064),  # word joiner, invisible operators
    (0x2066, 0x2069),  # bidirectional isolates
    (0x206A, 0x206F),  # deprecated formatting characters
    (0xFEFF, 0xFEFF),  # zero-width no-break space (byte order mark)
    (0xFFF9, 0xFFFB),  # interlinear annotation characters
    (0xE0000, 0xE007F),  # tag characters (invisible ASCII look-alikes)
)
#: Control characters a reader never needs: C0 except tab, LF and CR; DEL; C1.
CONTROL_RANGES: tuple[tuple[int, int], ...] = (
    (0x00, 0x08),
    (0x0B, 0x0C),
    (0x0E, 0x1F),
    (0x7F, 0x9F),
)


def _code_points(ranges: Iterable[tuple[int, int]]) -> frozenset[int]:
    return frozenset(cp for lo, hi in ranges for cp in range(lo, hi + 1))


INVISIBLE = _code_points(INVISIBLE_RANGES)
CONTROLS = _code_points(CONTROL_RANGES)
_REMOVE = dict.fromkeys(INVISIBLE | CONTROLS)


def text_problem(text: str) -> str | None:
    r"""Why ``text`` cannot be stored as written (a NUL, a lone surrogate, another control
    character but tab, LF and CR), or None. For input whose author can fix it, e.g. a card.

    >>> text_problem("fine\ttext\n")
    >>> text_problem("a\ud800")
    'a lone surrogate (U+D800) at character 2'
    >>> text_problem("bell\x07")
    'a control character (U+0007) at character 5'
    """
    for i, ch in enumerate(text, start=1):
        cp = ord(ch)
        if 0xD800 <= cp <= 0xDFFF:
            return f"a lone surrogate (U+{cp:04X}) at character {i}"
        if cp in CONTROLS or cp == 0:
            name = "a NUL character" if cp == 0 else "a control character"
            return f"{name} (U+{cp:04X}) at character {i}"
    return None


def encodable(text: str) -> str:
    """``text`` as every database and UTF-8 encoder can hold it (see the module docstring).

    >>> encodable("\\ud83d\\ude00 ok")
    '😀 ok'
    """
    if _NUL in text:
        text = text.replace(_NUL, "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # UTF-16 round trip: adjacent high+low surrogates pair up, lone ones become U+FFFD.
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def clean_text(text: str) -> str:
    """``encodable(text)`` without control or invisible formatting characters.

    Tab, line feed and carriage return are kept.

    >>> clean_text("line one\\nline\\ttwo\\u2066!\\u2069")
    'line one\\nline\\ttwo!'
    """
    text = encodable(text)
    if text.isascii() and text.isprintable():
        return text
    return text.translate(_REMOVE)


def encodable_json(value: object) -> object:
    """A JSON-like value with every string in it (keys too) made ``encodable``.

    Keys that become equal after cleaning keep the last value, as a JSON object would.

    >>> encodable_json({"a\\x00": ["b\\ud800", 1, None]})
    {'a': ['b�', 1, None]}
    """
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict):
        return {
            (encodable(k) if isinstance(k, str) else k): encodable_json(v) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [encodable_json(v) for v in value]
    return value
