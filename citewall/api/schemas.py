"""Wire schemas. ``*Public`` is what a member receives; ``Admin*`` what an admin receives.

Member schemas forbid extra fields and name no internal field, so they cannot carry one: a
source reaches a member only as ``SourcePublic``, built by ``external_sources_only``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from citewall.api.analytics_schemas import RetrievalEventRow
from citewall.boundary.external import SourcePublic
from citewall.kb.audiences import audience_names
from citewall.retrieval.types import HybridPath
from citewall.storage.conversations import TITLE_MAX_CHARS
from citewall.storage.feedback import COMMENT_MAX_CHARS
from citewall.storage.models import AnswerStatus, Rating
from citewall.text.cleaning import clean_text
from citewall.text.question import CleanQuestion

__all__ = [
    "MAX_OFFSET",
    "AdminCard",
    "AdminCardPage",
    "AdminConversation",
    "AdminConversationSummary",
    "AdminFeedback",
    "AdminMessage",
    "AdminSearchHit",
    "AdminSearchResponse",
    "AuthConfigPublic",
    "ChatRequest",
    "ChatResponsePublic",
    "ConversationPublic",
    "ConversationRename",
    "ConversationSummaryPublic",
    "ExamplesPublic",
    "FeedbackPublic",
    "FeedbackRequest",
    "MePublic",
    "MessagePublic",
    "SearchRequest",
    "SearchResponsePublic",
    "SearchResultPublic",
    "SessionPublic",
    "SignInRequest",
    "SourcePublic",
    "UnreadableStored",
]


#: Largest page offset accepted (SQLite integers are 64-bit; deeper pages mean a bad client).
MAX_OFFSET = 1_000_000


class _Public(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- requests --------------------------------------------------------------------------------


def _question(value: str) -> CleanQuestion:
    """A question as it enters: ``_typed_text``, stripped; the one place a request's question
    is cleaned (``text.question``)."""
    return CleanQuestion(_typed_text("message", value).strip())


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

    message: CleanQuestion = Field(
        min_length=1, description="The question (length limit: settings)."
    )
    conversation_id: str | None = Field(default=None, max_length=100)

    @field_validator("message")
    @classmethod
    def _clean(cls, value: str) -> CleanQuestion:
        return _question(value)


class ConversationRename(BaseModel):
    """A title the member chooses: whitespace collapsed, 1 to 200 characters."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(description=f"1 to {TITLE_MAX_CHARS} characters once trimmed.")

    @field_validator("title")
    @classmethod
    def _clean(cls, value: str) -> str:
        title = " ".join(_typed_text("title", value).split())
        if len(title) > TITLE_MAX_CHARS:
            raise ValueError(f"title has {len(title)} characters; the limit is {TITLE_MAX_CHARS}")
        return title


class FeedbackRequest(BaseModel):
    """A thumbs up or down on an answer, with an optional comment (trimmed; empty: none)."""

    model_config = ConfigDict(extra="forbid")

    rating: Rating = Field(description="'up' (helpful) or 'down' (not helpful).")
    comment: str | None = Field(
        default=None, description=f"At most {COMMENT_MAX_CHARS} characters once trimmed."
    )

    @field_validator("comment")
    @classmethod
    def _clean(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if "\x00" in value:
            raise ValueError("comment contains a NUL character")
        comment = clean_text(value).strip()
        if len(comment) > COMMENT_MAX_CHARS:
            raise ValueError(
                f"comment has {len(comment)} characters; the limit is {COMMENT_MAX_CHARS}"
            )
        return comment or None


class SignInRequest(BaseModel):
    """The host site's signed token for its logged-in member (a JWT)."""

    model_config = ConfigDict(extra="forbid")

    token: str = Field(
        description="The host's JWT (sub, exp, iat, iss, aud; optional name, email)."
    )


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
    #: The conversation's title after this turn: its first question's words, or the neutral
    #: title while it has held small talk only.
    title: str
    message_id: str
    answer: str
    #: ``answered``: from the knowledge base, with its sources; ``not_found``: one honest
    #: sentence saying the knowledge base does not answer it (no sources, no KB text);
    #: ``other_language``: one sentence, in the question's language where possible, saying which
    #: language the assistant answers in (nothing retrieved); ``small_talk``: a short reply to a
    #: greeting or thanks (nothing retrieved, no sources); ``stopped``: stopped mid-answer.
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


class FeedbackPublic(_Public):
    """The member's own rating of one answer."""

    message_id: str
    rating: Rating
    comment: str | None
    updated_at: datetime


class MessagePublic(_Public):
    """A stored message as a member sees it on history reload."""

    id: str
    role: Literal["user", "assistant"]
    content: str
    #: Assistant messages only (None on the member's own messages).
    answer_status: AnswerStatus | None
    sources: list[SourcePublic]
    hybrid_path: HybridPath | None
    #: The member's own rating (assistant messages only).
    feedback: FeedbackPublic | None
    #: The answer this one replaced (a regenerated answer); the earlier one stays before it.
    regenerated_from: str | None
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
    session: bool = Field(
        description="The bearer token is a session (sign-out revokes it), not an API token."
    )
    regenerate_varies: bool = Field(
        description="Answering a question again can give a different answer (false for the "
        "deterministic extractive generator): the web offers Regenerate only then."
    )
    handoff: bool = Field(
        default=False,
        description="A helpdesk takes requests for a person: the web offers "
        "'Talk to a person' only then.",
    )


class AuthConfigPublic(_Public):
    """Which ways of signing in this server offers (no secrets): the SPA shows what fits."""

    host_sign_in: bool = Field(description="Members sign in with a host site's token.")
    admin_proxy: bool = Field(description="Admins come through an identity-aware proxy.")


class SessionPublic(_Public):
    """A session for a member signed in by the host site: a bearer token until ``expires_at``."""

    token: str = Field(description="Send as 'Authorization: Bearer <token>'; shown only now.")
    expires_at: datetime
    name: str
    role: Literal["member", "admin"]
    regenerate_varies: bool = Field(
        description="Answering a question again can give a different answer (false for the "
        "deterministic extractive generator): the web offers Regenerate only then."
    )
    handoff: bool = Field(
        default=False,
        description="A helpdesk takes requests for a person: the embedded chat offers "
        "'Talk to a person' only then (as GET /api/v1/me says).",
    )


class ExamplesPublic(_Public):
    """Example questions for an empty conversation (settings; never from internal cards)."""

    questions: list[str]


# -- admin responses (full data) -------------------------------------------------------------


class UnreadableStored(BaseModel):
    """A stored value that is not the object it should be (``null``, a JSON string, a number, a
    list): an admin view shows it marked, as stored, instead of failing the whole page."""

    unreadable: Literal[True] = True
    #: What is wrong, for a person: "stored source is not an object (a string)".
    title: str
    #: The stored value as JSON text, at most ``UNREADABLE_RAW_CHARS`` characters.
    raw: str


class AdminFeedback(BaseModel):
    """The conversation owner's rating of an answer."""

    rating: Rating
    comment: str | None
    created_at: datetime
    updated_at: datetime


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
    #: The conversation owner's rating of this answer.
    feedback: AdminFeedback | None = None
    #: The answer this one replaced (a regenerated answer).
    regenerated_from: str | None = None
    created_at: datetime


class AdminConversationSummary(BaseModel):
    # Ids travel as strings (the user id is an integer in storage).
    model_config = ConfigDict(coerce_numbers_to_str=True)

    id: str
    user_id: str
    user_name: str
    title: str
    created_at: datetime
    updated_at: datetime
    message_count: int
    #: When its member deleted it (hidden from them; kept for admins), None when shown.
    hidden_at: datetime | None
    #: Its answers that said the knowledge base does not answer the question.
    not_found_answers: int
    #: Its answers the member rated "Helpful" and "Not helpful".
    rated_up: int
    rated_down: int


class AdminConversation(BaseModel):
    id: str
    user_id: str
    user_name: str
    title: str
    created_at: datetime
    updated_at: datetime
    hidden_at: datetime | None
    messages: list[AdminMessage]
    retrieval_events: list[RetrievalEventRow]


class AdminCard(BaseModel):
    id: str
    title: str
    url: str | None = None
    license: str | None = None
    external: bool
    #: An internal card's staff notes (an external card's public text).
    body: str | None = None
    #: An internal card's member-facing part ("Tell the member"); None when it has none.
    reply: str | None = None
    #: The groups the card is for (empty: every member).
    audiences: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: When an admin disabled the card (None: served); a disabled card is in no index.
    disabled_at: datetime | None = None
    disabled_by: str | None = None
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


class AdminPreviewRequest(BaseModel):
    """ "Answer as a member of these groups": the member path, run for an admin, storing nothing."""

    model_config = ConfigDict(extra="forbid")

    message: CleanQuestion = Field(
        min_length=1, description="The question (length limit: settings)."
    )
    groups: list[str] = Field(
        default_factory=list,
        max_length=20,
        description="The groups of the member to answer as (none: a member in no group).",
    )

    @field_validator("message")
    @classmethod
    def _clean(cls, value: str) -> CleanQuestion:
        return _question(value)

    @field_validator("groups")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        return list(audience_names(value))


class AdminPreviewResponse(BaseModel):
    """What a member of ``groups`` would receive: prose only, external sources only."""

    groups: list[str]
    answer: str
    answer_status: AnswerStatus
    sources: list[SourcePublic]
    hybrid_path: HybridPath | None
