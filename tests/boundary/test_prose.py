"""prose_only: members never see citation markers (stored content keeps them)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.boundary.prose import prose_only
from citewall.citations.markers import parse_markers


def test_strips_every_marker_form() -> None:
    text = "A [1]. B [1, 3]. C [2-4]. D [1][2]. E ［１］. F [99] [0] [-1]."
    assert prose_only(text) == "A. B. C. D. E. F."


def test_keeps_code_and_non_marker_brackets() -> None:
    assert prose_only("Run `a[1]` [note] [2].") == "Run `a[1]` [note]."


def test_non_string_gives_empty() -> None:
    assert prose_only(None) == ""  # type: ignore[arg-type]


chars = st.sampled_from([*"[]［］１2,- .`\n", "[1]", "[1-3]", "[99]", "[-1]", "word"])


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(chars, max_size=25).map("".join) | st.text(max_size=60))
def test_output_has_no_marker(text: str) -> None:
    out = prose_only(text)
    assert parse_markers(out) == []
    assert prose_only(out) == out
