"""Cleaning untrusted text: total, idempotent, and exact where there is nothing to clean."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.text.cleaning import (
    CONTROLS,
    INVISIBLE,
    clean_text,
    encodable,
    encodable_json,
    text_problem,
)

#: Every code point, surrogates and NUL included.
ANY_TEXT = st.text(alphabet=st.characters(codec=None))
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=examples(500), deadline=None)
@given(ANY_TEXT)
def test_encodable_text_encodes_and_is_a_fixed_point(text: str) -> None:
    out = encodable(text)
    out.encode("utf-8")  # never raises
    assert "\x00" not in out
    assert encodable(out) == out


@settings(max_examples=examples(500), deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00")))
def test_encodable_keeps_valid_text_exactly(text: str) -> None:
    assert encodable(text) == text


@settings(max_examples=examples(500), deadline=None)
@given(ANY_TEXT)
def test_clean_text_leaves_nothing_hidden_and_is_idempotent(text: str) -> None:
    out = clean_text(text)
    out.encode("utf-8")
    assert not [c for c in out if ord(c) in CONTROLS or ord(c) in INVISIBLE or c == "\x00"]
    assert clean_text(out) == out


@settings(max_examples=examples(500), deadline=None)
@given(ANY_TEXT)
def test_clean_text_only_removes_or_replaces(text: str) -> None:
    # Removing the hidden characters from the input and replacing lone surrogates gives the
    # output: nothing visible is added, moved or dropped.
    expected = encodable("".join(c for c in text if ord(c) not in CONTROLS | INVISIBLE))
    assert clean_text(text) == expected


@settings(max_examples=examples(300), deadline=None)
@given(_json)
def test_encodable_json_serialises_as_utf8(value: object) -> None:
    out = encodable_json(value)
    json.dumps(out, ensure_ascii=False).encode("utf-8")
    assert encodable_json(out) == out


@settings(max_examples=examples(500), deadline=None)
@given(ANY_TEXT)
def test_text_problem_is_none_exactly_when_nothing_would_change(text: str) -> None:
    visible_controls_kept = "".join(c for c in text if ord(c) not in INVISIBLE)
    problem = text_problem(visible_controls_kept)
    assert (problem is None) == (clean_text(visible_controls_kept) == visible_controls_kept)


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("tab\tline\ncarriage\r", "tab\tline\ncarriage\r"),
        ("\u202eevil\u202c", "evil"),  # right-to-left override, pop directional formatting
        ("a\u2066b\u2069c", "abc"),  # isolates
        ("zero\u200bwidth\u200c\u200d\u200e\u200f", "zerowidth"),
        ("tag\U000e0041\U000e0042", "tag"),  # invisible tag characters
        ("bom\ufeff", "bom"),
        ("del\x7f c1\x85", "del c1"),
        ("\ud83d\ude00", "\U0001f600"),  # a pair written as two halves is one character
        ("\ude00\ud83d", "\ufffd\ufffd"),  # the wrong way round is two lone halves
    ],
)
def test_clean_text_examples(text: str, cleaned: str) -> None:
    assert clean_text(text) == cleaned
