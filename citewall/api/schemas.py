"""Wire schemas. ``*Public`` is what a member receives; ``Admin*`` what an admin receives.

Member schemas forbid extra fields and name no internal field, so they cannot carry one: a
source reaches a member only as ``SourcePublic``, built by ``external_sources_only``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from citewall.boundary.external import SourcePublic
from citewall.retrieval.types import HybridPath
from citewall.storage.models import AnswerStatus
from citewall.text.cleaning import clean_text

__all__ = [
    "MAX_OFFSET",
    "AdminCard",
    "AdminCardPage",
    "AdminConversation",
    "AdminConversationSummary",
    "AdminMessage",
    "AdminSearchHit",
    "AdminSearchResponse",
    "ChatRequest",
    "ChatResponsePublic",
    "ConversationPublic",
    "ConversationSummaryPublic",
    "ExposureBudget",
    "ExposureCard",
    "ExposureDay",
    "ExposureMember",
    "ExposureReport",
    "ExposureTurn",
    "KnowledgeGap",
    "KnowledgeGapPeriod",
    "KnowledgeGapQuestion",
    "KnowledgeGapReport",
    "MePublic",
    "MemberExposureReport",
    "MessagePublic",
    "SearchRequest",
    "SearchResponsePublic",
    "SearchResultPublic",
    "SourcePublic",
    "UnreadableStored",
]


#: Largest page offset accepted (SQLite integers are 64-bit; deeper pages mean a bad client).
MAX_OFFSET = 1_000_000


class _Public(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- requests --------------------------------------------------------------------------------


def _typed_text(name: str, value: str) -> str:
    """Text a person typed, as citewall uses it: NUL and blank text refused; control and
    invisible formatting characters removed (``clean_text``)."""
    if "\x00" in value:  # no database stores NUL in text; refuse it up front
        raise ValueError(f"{name} contains a NUL character")
    cleaned = clean_text(value)
    if not cleaned.strip():
        raise ValueError(f"{name} is empty or whitespace only")
    return cleaned


class ChatRequest(BaseModel):
    """One member message; ``conversation_id`` null starts a new conversation."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(min_length=1, description="The question (length limit: settings).")
    conversation_id: str | None = Field(default=None, max_length=100)

    @field_validator("message")
    @classmethod
    def _clean(cls, value: str) -> str:
        return _typed_text("message", value)


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=1000)
    limit: int = Field(default=5, ge=1, le=50)

    @field_validator("query")
    @classmethod
    def _clean(cls, value: str) -> str:
        return _typed_text("query", value)


# -- member responses ------------------------------------------------------------------------


class ChatResponsePublic(_Public):
    """A member's answer: prose only (no markers), external sources only."""

    conversation_id: str
    message_id: str
    answer: str
    #: ``answered``: from the knowledge base, with its sources; ``not_found``: one honest
    #: sentence saying the knowledge base does not answer it (no sources, no KB text).
    answer_status: AnswerStatus
    sources: list[SourcePublic]
    hybrid_path: HybridPath | None
    created_at: datetime


class ConversationSummaryPublic(_Public):
    id: str
    title: str
    created_at: datetime
    updated_at: datetime
    message_count: int


class MessagePublic(_Public):
    """A stored message as a member sees it on history reload."""

    id: str
    role: Literal["user", "assistant"]
    content: str
    #: Assistant messages only (None on the member's own messages).
    answer_status: AnswerStatus | None
    sources: list[SourcePublic]
    hybrid_path: HybridPath | None
    created_at: datetime


class ConversationPublic(_Public):
    id: str
    title: str
    created_at: datetime
    messages: list[MessagePublic]


class SearchResultPublic(_Public):
    """An external card only; internal cards never appear in member search."""

    card_id: str
    title: str
    url: str
    license: str | None
    excerpt: str


class SearchResponsePublic(_Public):
    results: list[SearchResultPublic]
    hybrid_path: HybridPath | None


class MePublic(_Public):
    name: str
    role: Literal["member", "admin"]


# -- admin responses (full data) -------------------------------------------------------------


class UnreadableStored(BaseModel):
    """A stored value that is not the object it should be (``null``, a JSON string, a number, a
    list): an admin view shows it marked, as stored, instead of failing the whole page."""

    unreadable: Literal[True] = True
    #: What is wrong, for a person: "stored source is not an object (a string)".
    title: str
    #: The stored value as JSON text, at most ``UNREADABLE_RAW_CHARS`` characters.
    raw: str


class AdminMessage(BaseModel):
    """A stored message exactly as kept: content with markers, every source.

    A stored source or ``timings`` value that is not an object is served as an
    ``UnreadableStored`` placeholder in its place (``timings``: its dump), never dropped.
    """

    id: str
    seq: int
    role: str
    content: str
    sources: list[dict[str, Any] | UnreadableStored]
    hybrid_path: str | None
    timings: dict[str, Any] | None
    generator: str | None
    dropped_markers: Any = None
    answer_status: str | None = None
    support: float | None = None
    #: Why the answer used external cards only (the member's exposure budget), or None.
    restricted: str | None = None
    created_at: datetime


class AdminConversationSummary(BaseModel):
    # Ids travel as strings (the user id is an integer in storage).
    model_config = ConfigDict(coerce_numbers_to_str=True)

    id: str
    user_id: str
    title: str
    created_at: datetime
    updated_at: datetime
    message_count: int


class AdminConversation(BaseModel):
    id: str
    user_id: str
    title: str
    created_at: datetime
    updated_at: datetime
    messages: list[AdminMessage]
    retrieval_events: list[dict[str, Any]]


class AdminCard(BaseModel):
    id: str
    title: str
    url: str | None = None
    license: str | None = None
    external: bool
    body: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: Every other catalogue column (content hash, ingest version, timestamps).
    extra: dict[str, Any] = Field(default_factory=dict)


class AdminCardPage(BaseModel):
    total: int
    limit: int
    offset: int
    cards: list[AdminCard]


class AdminSearchHit(BaseModel):
    card_id: str
    title: str
    url: str | None
    license: str | None
    text: str
    metadata: dict[str, Any]
    scores: dict[str, Any]


class AdminSearchResponse(BaseModel):
    results: list[AdminSearchHit]
    hybrid_path: HybridPath | None
    notes: list[str]


class KnowledgeGapQuestion(BaseModel):
    message_id: str
    conversation_id: str
    question: str
    answer_status: str
    support: float | None
    asked_at: datetime


class KnowledgeGapPeriod(BaseModel):
    period_start: str
    count: int


class KnowledgeGap(BaseModel):
    """Similar questions the knowledge base did not answer well (named by the newest)."""

    question: str
    count: int
    not_found: int
    low_support: int
    last_asked: datetime | None
    per_period: list[KnowledgeGapPeriod]
    examples: list[KnowledgeGapQuestion]


class KnowledgeGapReport(BaseModel):
    period: Literal["day", "week", "month"]
    #: Answered questions with support below this count as gaps (``not_found`` ones always do).
    low_support_below: float
    since: datetime | None
    until: datetime | None
    questions: int
    #: True when more questions matched than one report reads (the newest were grouped).
    truncated: bool
    groups: list[KnowledgeGap]


class ExposureBudget(BaseModel):
    """The exposure budget in force: distinct internal cards per member per rolling window."""

    #: 0 when the budget is off.
    cards: int
    window_hours: float


class ExposureMember(BaseModel):
    """One member's exposure to internal cards over the report's window."""

    # Ids travel as strings (the user id is an integer in storage).
    model_config = ConfigDict(coerce_numbers_to_str=True)

    user_id: str
    name: str
    role: str
    #: Answers that drew on at least one internal card.
    turns: int
    #: Distinct internal cards those answers drew on.
    cards: int
    #: ``cards`` over the internal cards in the catalogue (None when there are none).
    corpus_share: float | None
    #: Distinct internal sentences the answers repeated whole.
    verbatim_sentences: int
    #: Longest run of words one answer shared with one card.
    longest_span: int
    first_exposed: datetime | None
    last_exposed: datetime | None
    #: Answers limited to external knowledge because the budget was spent (the alert).
    restricted_turns: int
    first_restricted: datetime | None


class ExposureReport(BaseModel):
    since: datetime | None
    until: datetime | None
    budget: ExposureBudget
    internal_cards: int
    #: Members with exposure or restricted answers in the window (``members`` is the top).
    members_total: int
    members: list[ExposureMember]


class ExposureDay(BaseModel):
    #: The UTC day, ``YYYY-MM-DD``.
    day: str
    cards: int
    verbatim_sentences: int
    turns: int
    restricted_turns: int


class ExposureCard(BaseModel):
    """One internal card in one answer."""

    card_id: str
    title: str | None
    cited: bool
    verbatim_sentences: int
    card_sentences: int
    longest_span: int


class ExposureTurn(BaseModel):
    message_id: str
    conversation_id: str
    created_at: datetime
    #: The member's question (None if it is missing).
    question: str | None
    #: Why the answer was limited to external knowledge, None when it was not.
    restricted: str | None
    cards: list[ExposureCard]


class MemberExposureReport(BaseModel):
    since: datetime | None
    until: datetime | None
    budget: ExposureBudget
    internal_cards: int
    member: ExposureMember
    #: Per UTC day, oldest first.
    days: list[ExposureDay]
    #: Answers in the window; ``turns`` is the page ``offset``/``limit``, newest first.
    turns_total: int
    offset: int
    limit: int
    turns: list[ExposureTurn]
