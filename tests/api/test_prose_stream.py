"""Property tests: streamed member prose never shows a marker, however the deltas are split."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from markup import html_markup
from testenv import examples

from citewall.api.prose_stream import (
    _DEFINITION_START,
    OpenCode,
    ProseStream,
    open_code_start,
    safe_prefix_end,
)
from citewall.boundary.prose import prose_only
from citewall.citations.markers import parse_markers

PLAIN = ["Refunds", " take", " 5 days", ".", " ", "[", "]", "1", "2", ",", "-", "［", "］", "１"]
PLAIN += ["[1]", "[2, 3]", " [1][2]", "\n", "Ask", "[[1]", "1]]"]
#: Every marker form a model is known to write, and footnote definitions.
PLAIN += ["【", "】", "3", "†source", "^", "[^1]", "【2†source】", "[[1]]", ":", " policy"]
#: Raw HTML a model may write: it reaches the member escaped, in the stream as in the answer.
PLAIN += ["<", "a href=x", ">", "</", "img src=x", "<!--", "?", " 1 < 2", "b>"]
#: Markdown code and link syntax: inside them brackets are not markers, which later text can
#: change; for such text the ``final`` event's answer is authoritative (see docs/api.md).
MARKDOWN = ["`", "(see [", "1])", "a[1]", "](", ")", "```\n"]


def split_stream(text_parts: list[str], cuts: list[int]) -> list[str]:
    text = "".join(text_parts)
    points = sorted({c % (len(text) + 1) for c in cuts})
    out, last = [], 0
    for p in [*points, len(text)]:
        out.append(text[last:p])
        last = p
    return out


def run(deltas: list[str]) -> tuple[str, str]:
    stream = ProseStream(prose_only)
    shown = ""
    for d in deltas:
        shown += stream.feed(d)
        assert not parse_markers(shown), repr(shown)
        assert html_markup(shown) == [], repr(shown)
        assert prose_only(shown) == shown
    final = prose_only("".join(deltas))
    return shown + stream.finish(final), final


@settings(max_examples=examples(400), deadline=None)
@given(
    st.lists(st.sampled_from(PLAIN + MARKDOWN), max_size=30),
    st.lists(st.integers(0, 10_000), max_size=12),
)
def test_streamed_prose_never_shows_a_marker(parts: list[str], cuts: list[int]) -> None:
    shown, _ = run(split_stream(parts, cuts))
    assert not parse_markers(shown)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.sampled_from(PLAIN), max_size=30), st.lists(st.integers(0, 10_000), max_size=12))
def test_streamed_prose_ends_as_the_final_answer(parts: list[str], cuts: list[int]) -> None:
    shown, final = run(split_stream(parts, cuts))
    assert shown == final


@given(st.text(alphabet="ab [1]］［,", max_size=40))
def test_safe_prefix_never_ends_inside_an_open_bracket(text: str) -> None:
    end = safe_prefix_end(text)
    assert 0 <= end <= len(text)
    head = text[:end]
    last_open = max(head.rfind("["), head.rfind("［"))
    if last_open != -1:
        assert "]" in head[last_open:] or "］" in head[last_open:]
    assert not head[-1:].isspace()


def test_a_marker_split_across_deltas_never_shows() -> None:
    stream = ProseStream(prose_only)
    shown = [
        stream.feed(d) for d in ["Refunds take 5 days ", "[", "1", "]", ". Ask", " billing [2]."]
    ]
    assert "".join(shown) + stream.finish(
        prose_only("Refunds take 5 days [1]. Ask billing [2].")
    ) == ("Refunds take 5 days. Ask billing.")
    assert "[" not in "".join(shown)


def test_a_stray_closing_bracket_does_not_hold_back_the_text() -> None:
    stream = ProseStream(prose_only)
    assert stream.feed("Option b] is fine") == "Option b] is fine"
    assert safe_prefix_end("see a]") == len("see a]")


def test_an_unfinished_tag_across_deltas_is_held_back() -> None:
    stream = ProseStream(prose_only)
    shown = [stream.feed(d) for d in ["Click ", "<", "a href='https://evil.example'", ">here"]]
    assert shown[:3] == ["Click", "", ""]  # nothing of the tag before its next character is known
    final = prose_only("Click <a href='https://evil.example'>here")
    assert "".join(shown) + stream.finish(final) == final
    assert final == "Click &lt;a href='https://evil.example'>here"


def _open_code_by_hand(text: str) -> int | None:
    """The rule ``open_code_start`` implements, character by character (the oracle)."""
    i, opened = 0, None
    while i < len(text):
        if text[i] != "`":
            i += 1
            continue
        j = i
        while j < len(text) and text[j] == "`":
            j += 1
        if opened is None:
            opened = (i, j - i)
        elif opened[1] == j - i:
            opened = None
        i = j
    return opened[0] if opened else None


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet="`a \n", max_size=40))
def testopen_code_start_follows_the_backtick_rule(text: str) -> None:
    assert open_code_start(text) == _open_code_by_hand(text)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.text(alphabet="`a \n", max_size=6), max_size=12), st.booleans())
def test_open_code_of_a_growing_text_reads_as_the_whole_text(parts: list[str], grow: bool) -> None:
    """Fed the text so far (or, to reset it, unrelated texts), ``OpenCode`` answers exactly
    what a scan of the whole text does."""
    scanner = OpenCode()
    text = ""
    for part in parts:
        text = text + part if grow else part
        assert scanner(text) == _open_code_by_hand(text), repr(text)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.sampled_from(PLAIN + MARKDOWN), max_size=30),
    st.lists(st.integers(0, 10_000), max_size=12),
)
def test_the_hold_back_of_a_growing_text_reads_as_the_whole_text(
    parts: list[str], cuts: list[int]
) -> None:
    scanner = OpenCode()
    raw = ""
    for delta in split_stream(parts, cuts):
        raw += delta
        assert safe_prefix_end(raw, scanner) == safe_prefix_end(raw), repr(raw)


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet="[]［】^:1a \t\n", max_size=40))
def test_a_definition_is_looked_for_on_the_last_line_only(text: str) -> None:
    """The last-line search finds what a search of the whole text finds."""
    whole = _DEFINITION_START.search(text)
    last_line = _DEFINITION_START.search(text, max(text.rfind("\n"), 0))
    assert (whole and whole.start()) == (last_line and last_line.start())
