"""Property tests the data path's pure functions were missing (the audit is in
docs/reliability.md; everything else already has hypothesis tests next to its package).

- ``url_problem``: ANY valid URL with one unsafe character inserted anywhere, or credentials
  added, is refused (tests/kb/test_urls.py checks what is accepted on random text, which
  rarely builds a valid URL to break);
- ``sentence_spans``: ordered, disjoint, trimmed spans covering every non-space character
  (citations attach to these sentences; only example tests covered it).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.citations.sentences import sentence_spans, split_sentences
from citewall.kb.urls import url_problem

_HOSTS = st.from_regex(
    r"[a-z][a-z0-9-]{0,15}(\.[a-z][a-z0-9-]{0,10}){0,2}\.[a-z]{2,6}", fullmatch=True
)
_PATHS = st.from_regex(
    r"(/[A-Za-z0-9._~%-]{0,12}){0,4}(\?[a-z]{1,5}=[A-Za-z0-9]{0,6})?", fullmatch=True
)
_VALID = st.builds(
    lambda scheme, host, path: f"{scheme}://{host}{path}",
    st.sampled_from(["http", "https", "HTTPS"]),
    _HOSTS,
    _PATHS,
)
#: Characters decision 0003 says a shown URL may never contain.
_UNSAFE = st.sampled_from(
    [
        " ",
        "\t",
        "\n",
        "\r",
        "\x00",
        "\x07",
        "\x1b",
        "\x7f",
        "\\",
        "\u00a0",
        "\u200b",
        "\u2028",
        "\u202e",
        "\ufeff",
        "\u3000",
    ]
)


@settings(max_examples=examples(300), deadline=None)
@given(_VALID)
def test_generated_valid_urls_are_accepted(url: str) -> None:
    assert url_problem(url) is None, url_problem(url)


@settings(max_examples=examples(500), deadline=None)
@given(_VALID, _UNSAFE, st.integers(min_value=0))
def test_one_unsafe_character_anywhere_is_refused(url: str, bad: str, where: int) -> None:
    i = where % (len(url) + 1)
    broken = url[:i] + bad + url[i:]
    problem = url_problem(broken)
    assert problem is not None, repr(broken)


@settings(max_examples=examples(200), deadline=None)
@given(_VALID, st.from_regex(r"[A-Za-z0-9]{1,8}(:[A-Za-z0-9]{0,8})?", fullmatch=True))
def test_credentials_are_refused(url: str, userinfo: str) -> None:
    scheme, rest = url.split("://", 1)
    assert url_problem(f"{scheme}://{userinfo}@{rest}") == "contains credentials"


@settings(max_examples=examples(200), deadline=None)
@given(st.one_of(st.none(), st.integers(), st.floats(), st.binary(), st.lists(st.text())))
def test_non_strings_are_refused_without_raising(value: object) -> None:
    assert url_problem(value) == "not a string"


_TEXT_PIECES = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        [
            ". ",
            "! ",
            "? ",
            "\n",
            "。",
            "e.g. ",
            "3.5 ",
            "[1]",
            " [2].",
            "`a. b`",
            "```\nx. y\n```",
            "[link](http://a.b/c. d)",
            "Dr. ",
            "...",
            "  ",
            "\u3002 ",
            "\r\n",
        ]
    ),
)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(_TEXT_PIECES, max_size=10).map("".join))
def test_sentence_spans_are_ordered_disjoint_trimmed_and_cover_the_text(text: str) -> None:
    spans = sentence_spans(text)
    prev_end = 0
    for start, end in spans:
        assert prev_end <= start < end <= len(text)
        assert not text[start].isspace() and not text[end - 1].isspace()
        prev_end = end
    covered = {i for s, e in spans for i in range(s, e)}
    assert all(ch.isspace() for i, ch in enumerate(text) if i not in covered)
    assert split_sentences(text) == [text[s:e] for s, e in spans]
