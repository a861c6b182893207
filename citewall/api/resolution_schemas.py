"""Wire schemas of the resolution report: conversations by outcome per period, per top card
and per knowledge-gap group, and the conversations behind a number (admin)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel

from citewall.retrieval.covered import Verdict
from citewall.storage.resolution import Outcome


class OutcomeCounts(BaseModel):
    """Conversations by outcome (``open``: the window has not closed, not counted yet)."""

    resolved: int
    escalated: int
    unresolved: int
    abandoned: int
    open: int


class ResolutionPeriodPublic(BaseModel):
    """One period (its first day, UTC; empty for the totals): counts, and the shares of the
    decided conversations (``decided`` = all but ``open``; null when there is none)."""

    period_start: str
    counts: OutcomeCounts
    decided: int
    resolution_rate: float | None
    escalation_rate: float | None
    unresolved_rate: float | None
    abandoned_rate: float | None


class ResolutionReportPublic(BaseModel):
    """Conversations begun in ``[since, until)`` by outcome, per period, newest first."""

    period: Literal["day", "week"]
    window_hours: float
    since: datetime | None
    until: datetime | None
    periods: list[ResolutionPeriodPublic]
    totals: ResolutionPeriodPublic | None


class OutcomeConversationPublic(BaseModel):
    """A conversation behind a number, with its outcome."""

    conversation_id: str
    user_id: int
    user_name: str
    title: str
    created_at: datetime
    last_at: datetime
    outcome: Outcome
    top_card_id: str | None


class GroupOutcomes(BaseModel):
    """A group's conversations by outcome, and the shares of the decided ones."""

    counts: OutcomeCounts
    decided: int
    resolution_rate: float | None
    escalation_rate: float | None
    unresolved_rate: float | None
    abandoned_rate: float | None


class CardResolutionPublic(GroupOutcomes):
    """The conversations a card was the top card of (``title`` null: no longer in the KB)."""

    card_id: str
    title: str | None
    conversations: int


class GapResolutionPublic(GroupOutcomes):
    """A knowledge-gap group (its list, ``verdict``; its naming question and number of
    questions) and the outcomes of its distinct conversations. ``group_id`` lists them:
    ``/resolution/conversations?gap_group=<group_id>`` with the same ``since`` and ``until``."""

    verdict: Verdict
    group_id: str
    question: str
    questions: int
    conversations: int
