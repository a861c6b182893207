"""A question is cleaned once, where it enters: the request schema's one cleaning gives what
the three cleanings before gave it (schema, ``plan_turn``, the pipeline), for any text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from testenv import examples

from citewall.api.schemas import AdminPreviewRequest, ChatRequest
from citewall.errors import UserError
from citewall.text.cleaning import clean_text
from citewall.text.question import clean_question

#: Every code point, surrogates and NUL included, with the characters cleaning handles often.
QUESTION_TEXT = st.text(
    alphabet=st.characters(codec=None)
    | st.sampled_from(["\x00", "\x07", "\u200b", "\u202e", "\udcff", " ", "\n", "a"])
)


def _outcome(clean: object, text: str) -> str | type[Exception]:
    try:
        return clean(text)  # type: ignore[operator,no-any-return]
    except (UserError, ValidationError) as exc:
        return type(exc)


def _three_cleanings(text: str) -> str:
    """How a question reached retrieval before: the schema's ``clean_text``, then
    ``clean_question`` in ``plan_turn`` and again in ``stream_answer``."""
    return clean_question(clean_question(clean_text(text)))


@settings(max_examples=examples(500), deadline=None)
@given(QUESTION_TEXT)
def test_the_schema_cleans_the_question_once_as_the_three_cleanings_did(text: str) -> None:
    for schema in (ChatRequest, AdminPreviewRequest):
        try:
            once = schema.model_validate({"message": text}).message
        except ValidationError:
            continue  # refused at the boundary (NUL, blank): never reached the pipeline
        assert once == _three_cleanings(text)
        assert once == clean_question(once)  # cleaned: cleaning it again changes nothing


@settings(max_examples=examples(500), deadline=None)
@given(QUESTION_TEXT)
def test_clean_question_is_idempotent(text: str) -> None:
    once = _outcome(clean_question, text)
    if isinstance(once, str):
        assert clean_question(once) == once
        assert _three_cleanings(text) == once
    else:
        assert once is UserError


def test_a_question_with_nothing_visible_is_a_user_error() -> None:
    for text in ("   ", "\u200b\u202e \x07"):
        with pytest.raises(UserError, match="empty"):
            clean_question(text)
    with pytest.raises(ValidationError, match="empty"):
        ChatRequest.model_validate({"message": "\u200b \x07"})
    # Negative control: one visible character is a question.
    assert clean_question("\u200b?") == "?"
