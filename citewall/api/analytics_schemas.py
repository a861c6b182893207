"""Wire schemas of the admin analytics reports: entry performance, the retrieval-event log,
knowledge gaps, exposure and feedback. Every report is a typed model (no bare
``dict[str, Any]``), so the OpenAPI document describes it and clients can be generated from it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from citewall.retrieval.types import HybridPath
from citewall.storage.models import Rating

__all__ = [
    "EntryPerformanceRow",
    "ExposureBudget",
    "ExposureCard",
    "ExposureDay",
    "ExposureMember",
    "ExposureReport",
    "ExposureTurn",
    "FeedbackCard",
    "FeedbackReport",
    "KnowledgeGap",
    "KnowledgeGapPeriod",
    "KnowledgeGapQuestion",
    "KnowledgeGapReport",
    "MemberExposureReport",
    "RatedAnswer",
    "RetrievalEventRow",
]


class EntryPerformanceRow(BaseModel):
    """One card (in one period) of the entry-performance rollup."""

    card_id: str
    #: ``YYYY-MM-DD`` (UTC) of the period's first day; None for ``period=all``.
    period_start: str | None
    #: Retrieval events of the card.
    times_retrieved: int
    #: Answers whose stored sources cite the card (internal cards included).
    times_cited: int
    #: ``times_cited / times_retrieved``; None if never retrieved.
    cite_rate: float | None
    #: Mean final rank when retrieved; None if never retrieved.
    mean_rank: float | None
    last_cited: datetime | None
    is_external: bool
    #: Thumbs up members gave answers that cited the card.
    helpful: int
    #: Thumbs down members gave answers that cited the card.
    unhelpful: int
    #: ``helpful / (helpful + unhelpful)``; None if nobody rated.
    helpful_rate: float | None
    #: Requests for a person made after an answer that cited the card, in its conversation.
    handoffs: int = 0
    #: The card's audiences in the catalogue now; empty: every member (or a removed card).
    audiences: list[str] = []


class RetrievalEventRow(BaseModel):
    """One retrieved card of one answer: its rank and score at every stage (None: the stage
    did not run or did not rank it)."""

    id: int
    message_id: str
    conversation_id: str
    card_id: str
    final_rank: int
    dense_rank: int | None
    dense_score: float | None
    bm25_rank: int | None
    bm25_score: float | None
    rrf_rank: int | None
    rrf_score: float | None
    rerank_rank: int | None
    rerank_logit: float | None
    hybrid_path: HybridPath | None
    cited: bool
    is_external: bool
    #: The text retrieval ran with (a follow-up's includes the question it leans on).
    query: str | None
    created_at: datetime


class KnowledgeGapQuestion(BaseModel):
    message_id: str
    conversation_id: str
    question: str
    answer_status: str
    support: float | None
    asked_at: datetime
    #: Why it is listed: ``not_found`` or ``low_coverage`` (a gap), ``rated_down`` or
    #: ``low_support`` (answered badly).
    reason: Literal["not_found", "low_coverage", "rated_down", "low_support"]
    #: Best share of the question's content terms one retrieved card holds.
    coverage: float | None
    rating: Literal["up", "down"] | None
    #: Why the question has no words: removed under retention, or erased (None: stored).
    removed: Literal["retention", "erasure"] | None = None


class KnowledgeGapPeriod(BaseModel):
    period_start: str
    count: int


class KnowledgeGap(BaseModel):
    """Similar questions, named by the newest, with how many are listed for each reason."""

    question: str
    count: int
    not_found: int
    low_coverage: int
    rated_down: int
    low_support: int
    last_asked: datetime | None
    per_period: list[KnowledgeGapPeriod]
    examples: list[KnowledgeGapQuestion]


class KnowledgeGapReport(BaseModel):
    """Two lists: ``groups``, the questions the knowledge base does not cover (``not_found``,
    or answered with no retrieved card covering ``min_coverage`` of the question's terms), and
    ``answered_badly``, covered questions rated "Not helpful" or answered with support below
    ``low_support_below``."""

    period: Literal["day", "week", "month"]
    low_support_below: float
    min_coverage: float
    since: datetime | None
    until: datetime | None
    #: The group whose members' questions these are (None: every member's).
    audience: str | None = None
    #: Questions in the gaps list (``groups``).
    questions: int
    #: True when more answers were read than one report reads (the newest were classified).
    truncated: bool
    groups: list[KnowledgeGap]
    #: Questions in the answered-badly list.
    answered_badly_questions: int
    answered_badly: list[KnowledgeGap]


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


class FeedbackCard(BaseModel):
    """Thumbs on the answers that cited one card."""

    card_id: str
    title: str
    external: bool
    up: int
    down: int
    #: ``up / (up + down)``; None if nobody rated.
    helpful_rate: float | None


class RatedAnswer(BaseModel):
    """A rated answer: the answer as stored (markers kept), its question and the rating."""

    # Ids travel as strings (the user id is an integer in storage).
    model_config = ConfigDict(coerce_numbers_to_str=True)

    message_id: str
    conversation_id: str
    user_id: str
    user_name: str
    #: The question it answers (None if it is missing).
    question: str | None
    answer: str
    rating: Rating
    comment: str | None
    #: When the member first rated it.
    created_at: datetime
    #: When the rating was last given or changed (what the report's window and order use).
    updated_at: datetime
    #: Why the question and answer have no words: removed under retention, or erased (None:
    #: stored).
    removed: Literal["retention", "erasure"] | None = None


class FeedbackReport(BaseModel):
    """Members' thumbs up and down given in ``[since, until)``."""

    since: datetime | None
    until: datetime | None
    up: int
    down: int
    #: ``up / (up + down)``; None if nobody rated.
    helpful_rate: float | None
    #: The cards cited by rated answers: most thumbs down first, then fewest thumbs up.
    cards: list[FeedbackCard]
    #: Rated answers: thumbs down first, then newest first.
    worst: list[RatedAnswer]


class HeadlineNumbers(BaseModel):
    """The admin overview for ``[since, until)``: questions asked, answers "not found", and
    answers rated "Not helpful", each with its share of the answers. Small talk ("hi",
    "thanks") is counted apart and is in none of the others."""

    since: datetime | None
    until: datetime | None
    questions: int
    answers: int
    #: Small-talk messages replied to (greetings, thanks): not questions, never "not found".
    small_talk: int
    not_found: int
    #: ``not_found / answers``; None without answers.
    not_found_rate: float | None
    rated_down: int
    #: ``rated_down / answers``; None without answers.
    rated_down_rate: float | None
