"""Wire schemas of the test questions admins save from production (``/admin/eval-questions``).

Admin data: the conversation before a question is stored content, markers kept, as the
pipeline reads it for a follow-up.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from citewall.storage.eval_questions import FACT_MAX_CHARS, MAX_EXPECTED, MAX_FACTS

CardId = Annotated[str, Field(min_length=1, max_length=200)]
Fact = Annotated[str, Field(min_length=1, max_length=FACT_MAX_CHARS)]


class EvalQuestionCreate(BaseModel):
    """Save the question a stored answer answered as a test question: the card(s) that should
    have answered it (``expected``), or ``unanswerable``; optionally the facts its answer must
    state. ``source`` says where the admin saw it."""

    model_config = ConfigDict(extra="forbid")

    message_id: str = Field(min_length=1, max_length=36, description="The stored answer")
    source: Literal["conversation", "gap", "feedback"] = "conversation"
    expected: list[CardId] = Field(default_factory=list, max_length=MAX_EXPECTED)
    unanswerable: bool = False
    facts: list[Fact] = Field(default_factory=list, max_length=MAX_FACTS)


class EvalQuestionTurn(BaseModel):
    role: Literal["user", "assistant"]
    content: str


class EvalQuestionAdmin(BaseModel):
    """A saved test question as stored."""

    id: int
    question: str
    expected: list[str]
    unanswerable: bool
    facts: list[str]
    conversation: list[EvalQuestionTurn]
    source: Literal["conversation", "gap", "feedback"]
    #: The answer it was saved from (None once that answer is gone).
    message_id: str | None
    created_at: datetime
    updated_at: datetime
