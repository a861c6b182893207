"""Marker parsing, stripping and sentence splitting: examples and properties."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.citations.markers import MAX_RANGE, parse_markers, strip_markers
from citewall.citations.sentences import sentence_index, sentence_spans, split_sentences


def numbers(text: str) -> list[tuple[int, ...]]:
    return [m.numbers for m in parse_markers(text)]


def test_single_list_range_and_adjacent_forms() -> None:
    assert numbers("A [1]. B [1, 3]. C [2-4]. D [1][2].") == [(1,), (1, 3), (2, 3, 4), (1,), (2,)]


def test_full_width_brackets_digits_and_commas() -> None:
    assert numbers("退款需要五天［１］。也可以［２，３］") == [(1,), (2, 3)]
    assert numbers("range ［１－３］") == [(1, 2, 3)]


def test_offsets_point_at_the_marker_in_the_original_text() -> None:
    text = "Refunds take 5 days ［１２］ and more [3]."
    for m in parse_markers(text):
        assert text[m.start : m.end] == m.raw
        assert m.raw.startswith(("[", "［")) and m.raw.endswith(("]", "］"))


def test_markers_in_code_and_links_are_ignored() -> None:
    text = (
        "Use `items[1]` here.\n```python\nx = a[2]\n```\n"
        "See [1](https://evil.example) and ![3](data:image/png;base64,AAA) and [x [4]](y)."
    )
    assert numbers(text) == []
    assert numbers("`[1]` but this one counts [2].") == [(2,)]


def test_link_target_containing_brackets_is_not_a_marker() -> None:
    assert numbers("[docs](https://e.x/a[1]b) and real [2]") == [(2,)]


def test_malformed_and_huge_numbers_never_raise_nor_expand() -> None:
    (m,) = parse_markers("[1-1000000000]")
    assert m.numbers == () and m.invalid == 1
    (m,) = parse_markers("[" + "9" * 5000 + "]")
    assert m.numbers == () and m.invalid == 1
    (m,) = parse_markers(f"[1-{MAX_RANGE}]")
    assert m.numbers == tuple(range(1, MAX_RANGE + 1))
    (m,) = parse_markers(f"[1-{MAX_RANGE + 1}]")
    assert m.numbers == () and m.invalid == 1
    (m,) = parse_markers("[0]")
    assert m.numbers == () and m.invalid == 1
    (m,) = parse_markers("[-1]")
    assert m.numbers == () and m.invalid == 1
    (m,) = parse_markers("[5-2]")
    assert m.numbers == () and m.invalid == 1
    assert numbers("[] [a] [1a] [ ] [1,,2] [n]") == []


def test_duplicates_inside_one_marker_collapse() -> None:
    assert numbers("[2, 2, 1-3]") == [(2, 1, 3)]


def test_sentence_index_follows_the_marker_after_the_full_stop() -> None:
    text = "First one. [1] Second sentence [2]. Third [3]?"
    ms = parse_markers(text)
    spans = sentence_spans(text)
    assert [sentence_index(spans, m.start) for m in ms] == [0, 1, 2]
    assert split_sentences(text) == ["First one. [1]", "Second sentence [2].", "Third [3]?"]


def test_split_sentences_lines_abbreviations_and_decimals() -> None:
    text = "Costs 5.5 dollars, e.g. for a plan. Next one!\n- item one\n- item two"
    assert split_sentences(text) == [
        "Costs 5.5 dollars, e.g. for a plan.",
        "Next one!",
        "- item one",
        "- item two",
    ]


def test_strip_markers_tidies_spaces() -> None:
    assert strip_markers("Refunds take 5 days [1]. Ask [2][3], then wait [1-2].") == (
        "Refunds take 5 days. Ask, then wait."
    )
    assert strip_markers("[1] Starts with a marker.") == "Starts with a marker."
    assert strip_markers("Full width［１］。") == "Full width。"
    assert strip_markers("keep `a[1]` code") == "keep `a[1]` code"
    assert strip_markers("[[1]2]") == ""


# -- properties -------------------------------------------------------------------------------

marker_text = st.builds(
    lambda nums: "[" + ", ".join(str(n) for n in nums) + "]",
    st.lists(st.integers(min_value=-5, max_value=10**12), min_size=1, max_size=4),
)
pieces = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8"), max_size=30),
    marker_text,
    st.sampled_from(
        [
            "[1]",
            "［２］",
            "[1-3]",
            "[2, 9]",
            "`[1]`",
            "[1](http://x)",
            "```\n[4]\n```\n",
            ". ",
            "\n",
            "[",
            "]",
            "-",
            ",",
            "[99999999999999-1]",
        ]
    ),
)
texts = st.lists(pieces, max_size=12).map("".join)


@settings(max_examples=examples(300), deadline=None)
@given(texts)
def test_parse_never_raises_and_numbers_are_bounded(text: str) -> None:
    ms = parse_markers(text)
    spans = sentence_spans(text)
    for m in ms:
        assert 0 <= m.start < m.end <= len(text)
        assert text[m.start : m.end] == m.raw
        assert all(1 <= n <= 10_000 for n in m.numbers)
        assert len(m.numbers) <= 4 * MAX_RANGE
        assert len(set(m.numbers)) == len(m.numbers)
        assert sentence_index(spans, m.start) < max(1, len(spans))
    starts = [m.start for m in ms]
    assert starts == sorted(starts)


@settings(max_examples=examples(300), deadline=None)
@given(texts)
def test_strip_leaves_no_marker_and_is_idempotent(text: str) -> None:
    stripped = strip_markers(text)
    assert parse_markers(stripped) == []
    assert strip_markers(stripped) == stripped
    assert len(stripped) <= len(text)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=6))
def test_written_markers_round_trip(nums: list[int]) -> None:
    text = " ".join(f"Claim number {i} [{n}]." for i, n in enumerate(nums))
    ms = parse_markers(text)
    assert [m.numbers for m in ms] == [(n,) for n in nums]
    spans = sentence_spans(text)
    assert [sentence_index(spans, m.start) for m in ms] == list(range(len(nums)))
    assert not re.search(r"\[\d+\]", strip_markers(text))


# -- every marker form a model is known to write ------------------------------------------------

#: Marker forms seen in model output, with ``{n}`` for the cited number.
VARIANTS = ("[{n}]", "［{n}］", "【{n}】", "【{n}†source】", "[{n}†{label}]", "[^{n}]", "[[{n}]]")


def test_marker_variants_models_write_are_parsed_and_stripped() -> None:
    text = "A 【3】. B 【3†source】. C [^1]. D [1†source]. E [[1]]. F [^2][^3]. G 【4:0†source】."
    assert numbers(text) == [(3,), (3,), (1,), (1,), (1,), (2,), (3,), ()]
    assert [m.invalid for m in parse_markers(text)][-1] == 1  # a tool reference is dropped
    assert strip_markers(text) == "A. B. C. D. E. F. G."


def test_footnote_labels_and_slices_are_not_markers() -> None:
    assert numbers("[^note] [1:2] [[Page]] [a†b]") == []
    assert numbers("【1】 in code: `【2】`") == [(1,)]


vocabulary = st.sampled_from(["Refunds", "take", "5", "days,", "ask", "billing", "x1"])
words = st.lists(vocabulary, min_size=1, max_size=4).map(" ".join)
labels = st.text(alphabet="source file.pdf 2:", max_size=12)


@st.composite
def stored_content(draw: st.DrawFn) -> tuple[str, list[int], str]:
    """Stored answer content (markers of every form), the numbers written, the prose."""
    parts, cited, prose = [], [], []
    for _ in range(draw(st.integers(1, 6))):
        sentence = draw(words)
        n = draw(st.integers(1, 40))
        marker = draw(st.sampled_from(VARIANTS)).format(n=n, label=draw(labels))
        parts.append(f"{sentence}{draw(st.sampled_from(['', ' ', '  ']))}{marker}.")
        cited.append(n)
        prose.append(f"{sentence}.")
    return " ".join(parts), cited, " ".join(prose)


@settings(max_examples=examples(300), deadline=None)
@given(stored_content())
def test_stored_content_parses_to_what_was_cited_and_strips_clean(
    case: tuple[str, list[int], str],
) -> None:
    content, cited, prose = case
    assert [n for m in parse_markers(content) for n in m.numbers] == cited
    assert strip_markers(content) == prose


def test_only_a_closed_fence_protects_brackets() -> None:
    assert numbers("~~~~\nRefunds take 5 days [2].") == [(2,)]
    assert numbers("~~~~\nitems[2]\n~~~~\nRefunds [1].") == [(1,)]
