"""Each conversation's outcome, computed in SQL on SQLite and PostgreSQL, and the resolution
report per day or week.

The rules, first match wins (``OUTCOME_RULES``; docs/handoff.md, "Resolution"):

- ``escalated``: the member asked for a person (a handoff);
- ``unresolved``: an answer said "not found" (small talk aside) or the member rated one
  "Not helpful", with no handoff;
- ``open``: neither, and the conversation's last message is less than
  ``CITEWALL_RESOLUTION_WINDOW_HOURS`` old: not counted yet, the member may still come back;
- ``abandoned``: no answer from the knowledge base at all, or its last answer was stopped;
- ``resolved``: answered, no sign of failure, and the window has closed.

"Resolved" means no sign of failure, not a confirmed fix: a member who gave up without rating
or asking for a person counts as resolved. A conversation is counted in the period it began
(UTC); counts come from SQL, rates are divided in Python, so both databases agree.

A conversation's **top card** is the card retrieval ranked first for the first answer the
member was given from the knowledge base (not a "not found", a reply in another language or
small talk; a stopped answer counts, the member read it) that retrieved anything (None: no
answer did). A "not found" retrieved candidates the member never saw, so it is not counted
against them. ``storage.resolution_groups`` counts outcomes per top card and per knowledge-gap
group.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy import Subquery, and_, case, func, literal, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from citewall.errors import UserError
from citewall.storage.analytics import as_utc, time_window
from citewall.storage.dialect import period_start
from citewall.storage.failures import storage_errors
from citewall.storage.headline import rate
from citewall.storage.models import Conversation, Feedback, Handoff, Message, RetrievalEvent, User
from citewall.storage.paging import check_page

Outcome = Literal["resolved", "escalated", "unresolved", "abandoned", "open"]
OUTCOMES: tuple[Outcome, ...] = ("resolved", "escalated", "unresolved", "abandoned", "open")
#: The outcomes that are decided (``open`` is not yet): the rates' denominator.
DECIDED: tuple[Outcome, ...] = ("resolved", "escalated", "unresolved", "abandoned")
ResolutionPeriod = Literal["day", "week"]
#: Answer statuses that gave the member nothing from the knowledge base: the candidates they
#: retrieved were never shown, so they name no top card.
_NOT_GIVEN = ("not_found", "other_language", "small_talk")
#: Most conversations ``outcome_conversations`` lists.
MAX_LISTED = 500


def conversation_outcomes(
    *,
    now: datetime,
    window: timedelta,
    small_talk_replies: Collection[str] = (),
) -> Subquery:
    """One row per conversation: ``(conversation_id, user_id, title, created_at, last_at,
    top_card_id, outcome)``, the outcome by the module's rules at ``now``: correlated counts and
    one CASE, the same SQL on both databases."""
    conv = Conversation.__table__.c
    mine = Message.conversation_id == Conversation.id
    assistant = and_(mine, Message.role == "assistant")
    small_talk = Message.content.in_(sorted(small_talk_replies))

    def count(*conditions: ColumnElement[bool]) -> ColumnElement[int]:
        return (
            select(func.count(Message.id))
            .where(*conditions)
            .correlate(Conversation)
            .scalar_subquery()
        )

    handoffs = (
        select(func.count(Handoff.id))
        .where(Handoff.conversation_id == Conversation.id)
        .correlate(Conversation)
        .scalar_subquery()
    )
    rated_down = (
        select(func.count(Feedback.id))
        .join(Message, Message.id == Feedback.message_id)
        .where(mine, Feedback.rating == "down")
        .correlate(Conversation)
        .scalar_subquery()
    )
    not_found = count(assistant, Message.answer_status == "not_found", ~small_talk)
    # A status no version wrote (or none, before statuses were stored) is served as answered.
    answered = count(
        assistant,
        or_(
            Message.answer_status.is_(None),
            Message.answer_status.not_in(("not_found", "stopped", "other_language")),
        ),
    )
    last_status = (
        select(Message.answer_status)
        .where(assistant)
        .order_by(Message.seq.desc())
        .limit(1)
        .correlate(Conversation)
        .scalar_subquery()
    )
    last_at = func.coalesce(
        select(func.max(Message.created_at)).where(mine).correlate(Conversation).scalar_subquery(),
        Conversation.created_at,
    )
    top_card = (
        select(RetrievalEvent.card_id)
        .join(Message, Message.id == RetrievalEvent.message_id)
        .where(
            RetrievalEvent.conversation_id == Conversation.id,
            or_(Message.answer_status.is_(None), Message.answer_status.not_in(_NOT_GIVEN)),
        )
        .order_by(Message.seq, RetrievalEvent.final_rank, RetrievalEvent.id)
        .limit(1)
        .correlate(Conversation)
        .scalar_subquery()
    )
    outcome = case(
        (handoffs > 0, literal("escalated")),
        (or_(not_found > 0, rated_down > 0), literal("unresolved")),
        (last_at > now - window, literal("open")),
        (or_(answered == 0, func.coalesce(last_status, "") == "stopped"), literal("abandoned")),
        else_=literal("resolved"),
    )
    return (
        select(
            conv.id.label("conversation_id"),
            conv.user_id.label("user_id"),
            conv.title.label("title"),
            conv.created_at.label("created_at"),
            last_at.label("last_at"),
            top_card.label("top_card_id"),
            outcome.label("outcome"),
        )
        .select_from(Conversation)
        .subquery("outcomes")
    )


@dataclass(frozen=True, slots=True)
class ResolutionPeriodRow:
    """One period's conversations by outcome, and the shares of the decided ones."""

    period_start: str
    counts: dict[str, int]
    decided: int
    resolution_rate: float | None
    escalation_rate: float | None
    unresolved_rate: float | None
    abandoned_rate: float | None


@dataclass(frozen=True, slots=True)
class ResolutionReport:
    """Every period that has a conversation, newest first, and the totals over them."""

    periods: list[ResolutionPeriodRow] = field(default_factory=list)
    totals: ResolutionPeriodRow | None = None


def _row(start: str, counts: dict[str, int]) -> ResolutionPeriodRow:
    decided = sum(counts[o] for o in DECIDED)
    return ResolutionPeriodRow(
        period_start=start,
        counts=counts,
        decided=decided,
        resolution_rate=rate(counts["resolved"], decided),
        escalation_rate=rate(counts["escalated"], decided),
        unresolved_rate=rate(counts["unresolved"], decided),
        abandoned_rate=rate(counts["abandoned"], decided),
    )


def resolution_report(
    session: Session,
    *,
    now: datetime,
    window: timedelta,
    period: ResolutionPeriod = "week",
    since: datetime | None = None,
    until: datetime | None = None,
    small_talk_replies: Collection[str] = (),
) -> ResolutionReport:
    """Conversations begun in ``[since, until)``, by period and outcome (at ``now``)."""
    if period not in ("day", "week"):
        raise UserError(f"period must be day or week, got {period!r}")
    dialect = session.get_bind().dialect.name
    outcomes = conversation_outcomes(now=now, window=window, small_talk_replies=small_talk_replies)
    start = period_start(dialect, period, outcomes.c.created_at).label("period_start")
    query = (
        select(start, outcomes.c.outcome, func.count())
        .where(*time_window(outcomes.c.created_at, as_utc(since), as_utc(until)))
        .group_by(start, outcomes.c.outcome)
    )
    with storage_errors(session, "computing the resolution report"):
        rows = session.execute(query).all()
    by_period: dict[str, dict[str, int]] = {}
    for start_text, outcome, n in rows:
        by_period.setdefault(str(start_text), {o: 0 for o in OUTCOMES})[str(outcome)] += int(n)
    totals: dict[str, int] = {o: sum(c[o] for c in by_period.values()) for o in OUTCOMES}
    return ResolutionReport(
        periods=[_row(p, by_period[p]) for p in sorted(by_period, reverse=True)],
        totals=_row("", totals) if by_period else None,
    )


@dataclass(frozen=True, slots=True)
class OutcomeConversation:
    """A conversation behind a number: who had it, when, and its outcome."""

    conversation_id: str
    user_id: int
    user_name: str
    title: str
    created_at: datetime
    last_at: datetime
    outcome: str
    top_card_id: str | None = None


def outcome_conversations(
    session: Session,
    *,
    now: datetime,
    window: timedelta,
    outcome: Outcome | None = None,
    top_card_id: str | None = None,
    conversation_ids: Collection[str] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    small_talk_replies: Collection[str] = (),
    limit: int = 100,
    offset: int = 0,
) -> list[OutcomeConversation]:
    """The conversations begun in ``[since, until)`` (with ``outcome`` and ``top_card_id``
    when given, and among ``conversation_ids`` when given), newest first: the conversations
    behind a count of ``resolution_report``, ``card_resolution`` or ``gap_resolution`` (a
    group's ``gap_group_conversations``)."""
    check_page(limit, offset)
    if outcome is not None and outcome not in OUTCOMES:
        raise UserError(f"outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
    outcomes = conversation_outcomes(now=now, window=window, small_talk_replies=small_talk_replies)
    conditions = time_window(outcomes.c.created_at, as_utc(since), as_utc(until))
    if outcome is not None:
        conditions.append(outcomes.c.outcome == outcome)
    if top_card_id is not None:
        conditions.append(outcomes.c.top_card_id == top_card_id)
    if conversation_ids is not None:
        # At most gaps.MAX_QUESTIONS ids: one bound list is within both databases' limits.
        conditions.append(outcomes.c.conversation_id.in_(sorted(conversation_ids)))
    query = (
        select(outcomes, User.name)
        .join(User, User.id == outcomes.c.user_id)
        .where(*conditions)
        .order_by(outcomes.c.created_at.desc(), outcomes.c.conversation_id)
        .limit(min(limit, MAX_LISTED))
        .offset(offset)
    )
    with storage_errors(session, "listing conversations by outcome"):
        rows = session.execute(query).all()
    return [
        OutcomeConversation(
            conversation_id=str(r.conversation_id),
            user_id=int(r.user_id),
            user_name=str(r.name),
            title=str(r.title),
            created_at=r.created_at,
            last_at=r.last_at,
            outcome=str(r.outcome),
            top_card_id=None if r.top_card_id is None else str(r.top_card_id),
        )
        for r in rows
    ]
