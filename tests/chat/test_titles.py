"""A conversation is named by its first real question; small talk keeps the neutral title."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from citewall.chat.smalltalk import smalltalk_reply
from citewall.chat.titles import NEUTRAL_TITLE, TITLE_CHARS, first_title, next_title, title_from


def test_a_greeting_leaves_the_neutral_title_and_the_first_question_names_it() -> None:
    assert first_title("hi") == NEUTRAL_TITLE
    assert first_title("Hello there!") == NEUTRAL_TITLE
    assert next_title(NEUTRAL_TITLE, "thanks a lot") is None
    assert next_title(NEUTRAL_TITLE, "How long do refunds take?") == "How long do refunds take?"
    assert first_title("hi, how do refunds work?") == "hi, how do refunds work?"


def test_a_named_conversation_keeps_its_title() -> None:
    assert next_title("How long do refunds take?", "Can I pause my plan?") is None
    assert next_title("My own name", "Can I pause my plan?") is None


def test_titles_are_short_and_collapse_whitespace() -> None:
    assert title_from("  How   long\ndo refunds take? ") == "How long do refunds take?"
    long = title_from("word " * 100)
    assert len(long) <= TITLE_CHARS + 1 and long.endswith("…")


@given(st.text(min_size=1, max_size=300))
def test_small_talk_never_names_a_conversation(message: str) -> None:
    title = first_title(message)
    if smalltalk_reply(message) is not None:
        assert title == NEUTRAL_TITLE
        assert next_title(NEUTRAL_TITLE, message) is None
    else:
        assert title == title_from(message)
    assert len(title) <= TITLE_CHARS + 1


@given(st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=300))
def test_only_the_neutral_title_is_ever_replaced(current: str, message: str) -> None:
    if current != NEUTRAL_TITLE:
        assert next_title(current, message) is None
