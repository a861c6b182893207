"""A member's question reaches retrieval cleaned exactly once (by the request schema), with
the result the three cleanings gave before (``tests/text/test_question.py`` for any text)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from citewall.kb.audiences import CardFilter
from citewall.retrieval.types import RetrievedContext
from citewall.text import cleaning

from .conftest import ApiEnv

MARKER = "zebraquux"
#: Leading and trailing blanks, a bidi override, a zero-width space, a bell (a lone surrogate
#: never gets this far: the request's JSON is refused with 422).
RAW = f"  {MARKER} a \u202elabel\u200b?\x07 "
CLEANED = f"{MARKER} a label?"


class RecordingRetriever:
    """The runtime's retriever, noting each question it is asked."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.questions: list[str] = []

    def retrieve(
        self, question: str, k: int | None = None, *, cards: CardFilter
    ) -> RetrievedContext:
        self.questions.append(question)
        return self.inner.retrieve(question, k, cards=cards)

    def status(self) -> dict[str, Any]:
        return dict(self.inner.status())


@pytest.mark.parametrize("path", ["/api/v1/chat", "/api/v1/chat/stream"])
def test_the_question_reaches_retrieval_cleaned_once(
    env_sqlite: ApiEnv, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    from citewall.api.app import create_app

    env = env_sqlite
    retriever = RecordingRetriever(env.runtime.retriever)
    client = TestClient(create_app(replace(env.runtime, retriever=retriever)))
    original = cleaning.clean_text
    cleaned: list[str] = []

    def counting(text: str) -> str:
        if MARKER in text:
            cleaned.append(text)
        return original(text)

    # Every module that took ``clean_text`` by name gets the counting one.
    for module in list(sys.modules.values()):
        name = getattr(module, "__name__", "")
        if name.startswith("citewall") and getattr(module, "clean_text", None) is original:
            monkeypatch.setattr(module, "clean_text", counting)

    response = client.post(
        path,
        content=json.dumps({"message": RAW}),
        headers={**env.auth("member"), "Content-Type": "application/json"},
    )
    assert response.status_code == 200, response.text
    assert retriever.questions == [CLEANED]
    assert cleaned == [RAW]  # once, at the boundary: the raw text, not a cleaned one again
