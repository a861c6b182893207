"""Small talk gets a friendly reply; anything that may be a question does not."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.chat.smalltalk import (
    ACK_REPLY,
    BYE_REPLY,
    GREETING_REPLY,
    THANKS_REPLY,
    smalltalk_reply,
)


@pytest.mark.parametrize(
    ("message", "reply"),
    [
        ("hi", GREETING_REPLY),
        ("Hello there!", GREETING_REPLY),
        ("good morning", GREETING_REPLY),
        ("thanks", THANKS_REPLY),
        ("Thank you so much!", THANKS_REPLY),
        ("ok bye", BYE_REPLY),
        ("ok", ACK_REPLY),
        ("hi?", GREETING_REPLY),
    ],
)
def test_small_talk_gets_its_reply(message: str, reply: str) -> None:
    assert smalltalk_reply(message) == reply


@pytest.mark.parametrize(
    "message",
    [
        "hi, how do refunds work?",
        "thanks, and how long does a void take?",
        "refunds",
        "ok?",
        "",
        "   ",
        "hello hello hello hello hello hello hello",
    ],
)
def test_anything_that_may_be_a_question_is_not_small_talk(message: str) -> None:
    assert smalltalk_reply(message) is None


@settings(max_examples=examples(300))
@given(
    greeting=st.sampled_from(["hi", "thanks", "ok", "hello", "bye"]),
    word=st.from_regex(r"[a-z]{4,10}", fullmatch=True).filter(lambda w: smalltalk_reply(w) is None),
)
def test_one_word_that_is_not_small_talk_makes_it_a_question(greeting: str, word: str) -> None:
    assert smalltalk_reply(f"{greeting} {word}") is None
