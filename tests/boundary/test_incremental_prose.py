"""``IncrementalProse`` is ``prose_only`` of the text so far, whatever the split into deltas."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

import citewall.boundary.prose as prose_module
from citewall.boundary.prose import IncrementalProse, prose_only

#: Pieces of answers: markers of every form, links, definitions, code, tags, line breaks.
PIECES = st.sampled_from(
    [
        "Refunds take 5 days",
        " [1]",
        "[2, 3]",
        "【4†source】",
        "[^5]",
        "[[1]2]",
        "[a[1]](https://x.example)",
        "![img](https://x.example/p.png)",
        "<https://x.example>",
        "[^1]: Refund policy",
        "`code [1]`",
        "```\nfenced [1]\n```",
        "~~~",
        "<b>",
        "<",
        "a < b",
        "\n",
        "\n\n",
        " ",
        "\t",
        ".",
        "［1］",
        "\u200b",
        "\ud83d",
        "\ude00",
    ]
)
TEXTS = st.lists(st.one_of(PIECES, st.text(max_size=6)), max_size=20).map("".join)


def deltas(text: str, cuts: list[int]) -> list[str]:
    points = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in pairwise(points)]


@settings(max_examples=examples(600), deadline=None)
@given(TEXTS, st.lists(st.integers(min_value=0), max_size=12))
def test_every_prefix_reads_as_the_whole_text_function_reads_it(text: str, cuts: list[int]) -> None:
    prose = IncrementalProse()
    so_far = ""
    for delta in deltas(text, cuts):
        so_far += delta
        assert prose(so_far) == prose_only(so_far), repr(so_far)
    assert prose(text) == prose_only(text)


@settings(max_examples=examples(200), deadline=None)
@given(TEXTS, TEXTS)
def test_a_text_that_does_not_extend_the_last_starts_again(first: str, second: str) -> None:
    prose = IncrementalProse()
    prose(first)
    assert prose(second) == prose_only(second)


def test_only_the_text_after_the_last_finished_line_is_read_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read: list[str] = []

    def counted(text: str) -> str:
        read.append(text)
        return prose_only(text)

    monkeypatch.setattr(prose_module, "prose_only", counted)
    prose = IncrementalProse()
    prose("Line one [1].\nLine")
    prose("Line one [1].\nLine two [2].\nAnd")
    assert read == ["Line one [1].\n", "Line", "Line two [2].\n", "And"]
    # Negative control: after a backtick nothing more is taken as finished.
    blocked = IncrementalProse()
    blocked("`x\n")
    assert blocked._done_raw == ""
