"""Admin routes: the card catalogue, everyone's conversations in full, analytics.

Admins see full data on purpose (decision 0002: "operators keep full visibility";
docs/decisions/0002-external-only-citations.md): stored content with markers, every stored
source, retrieval events.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any, Literal

from fastapi import APIRouter, Query

from citewall.api.abstention_schemas import AbstentionPublic, abstention_public
from citewall.api.analytics_schemas import (
    EntryPerformanceRow,
    ExposureBudget,
    ExposureDay,
    ExposureMember,
    ExposureReport,
    ExposureTurn,
    FeedbackCard,
    FeedbackReport,
    HeadlineNumbers,
    KnowledgeGap,
    KnowledgeGapPeriod,
    KnowledgeGapQuestion,
    KnowledgeGapReport,
    MemberExposureReport,
    RatedAnswer,
    RetrievalEventRow,
)
from citewall.api.audit import AuditTrail
from citewall.api.deps import AdminUser, RuntimeDep, SessionDep
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.schemas import (
    MAX_OFFSET,
    AdminCard,
    AdminCardPage,
    AdminConversation,
    AdminConversationSummary,
    AdminFeedback,
    AdminMessage,
)
from citewall.api.storage_rows import admin_sources, admin_timings
from citewall.chat.smalltalk import SMALL_TALK_REPLIES
from citewall.config import Settings
from citewall.errors import NotFoundError
from citewall.kb.audiences import AUDIENCE_PATTERN
from citewall.retrieval.covered import GapRule
from citewall.storage import (
    analytics,
    cards,
    conversations,
    feedback,
    feedback_report,
    gaps,
    headline,
    users,
)
from citewall.storage.exposure import report as exposure_report
from citewall.storage.models import CardRow, Feedback, Message

router = APIRouter(
    prefix="/api/v1/admin", tags=["admin"], responses=error_responses(*AUTHENTICATED, 403, 404)
)


def admin_card(row: CardRow) -> AdminCard:
    """A catalogue row as an admin sees it: every column."""
    return AdminCard(
        id=row.id,
        title=row.title,
        url=row.url,
        license=row.license,
        external=row.is_external,
        body=row.body,
        reply=row.reply,
        audiences=list(row.audiences or []),
        metadata=dict(row.meta or {}),
        disabled_at=row.disabled_at,
        disabled_by=row.disabled_by,
        extra={
            "content_hash": row.content_hash,
            "ingest_version": row.ingest_version,
            "created_at": row.created_at,
            "updated_at": row.updated_at,
        },
    )


@router.get("/cards", response_model=AdminCardPage)
def list_cards(
    session: SessionDep,
    admin: AdminUser,
    q: str | None = Query(None, max_length=200, description="Substring of id or title"),
    external: bool | None = Query(None, description="Only external (true) or internal (false)"),
    limit: int = Query(50, ge=1, le=500),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
) -> Any:
    """The KB catalogue, internal cards included."""
    rows, total = cards.list_cards(session, q, external, limit, offset)
    return AdminCardPage(
        total=total, limit=limit, offset=offset, cards=[admin_card(r) for r in rows]
    )


@router.get("/cards/{card_id}", response_model=AdminCard)
def get_card(card_id: str, session: SessionDep, admin: AdminUser) -> Any:
    """One card in full (body and every metadata key)."""
    row = cards.get_card(session, card_id)
    if row is None:
        raise NotFoundError(f"card {card_id[:200]!r} not found")
    return admin_card(row)


@router.get("/conversations", response_model=list[AdminConversationSummary])
def list_all_conversations(
    session: SessionDep,
    admin: AdminUser,
    trail: AuditTrail,
    limit: int = Query(50, ge=1, le=500),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
) -> Any:
    """Every user's conversations, most recently updated first; the ones their member deleted
    too (``hidden_at`` set). Their titles are members' first questions: written to the audit
    log."""
    listed = conversations.list_conversations(session, None, limit=limit, offset=offset)
    trail.record(session, "conversations.list", "report:conversations", {"listed": len(listed)})
    return [AdminConversationSummary.model_validate(s, from_attributes=True) for s in listed]


def admin_message(message: Message, rating: Feedback | None) -> AdminMessage:
    """A stored message exactly as kept, with its owner's rating."""
    return AdminMessage(
        id=str(message.id),
        seq=message.seq,
        role=message.role,
        content=message.content,
        sources=admin_sources(message.sources),
        hybrid_path=message.hybrid_path,
        timings=admin_timings(message.timings),
        generator=message.generator,
        dropped_markers=message.dropped_markers,
        answer_status=message.answer_status,
        support=message.support,
        restricted=message.restricted,
        feedback=(
            AdminFeedback(
                rating=rating.rating,
                comment=rating.comment,
                created_at=rating.created_at,
                updated_at=rating.updated_at,
            )
            if rating is not None
            else None
        ),
        regenerated_from=message.regenerated_from,
        created_at=message.created_at,
    )


@router.get("/conversations/{conversation_id}", response_model=AdminConversation)
def get_any_conversation(
    conversation_id: str, session: SessionDep, admin: AdminUser, trail: AuditTrail
) -> Any:
    """A conversation as stored (a deleted one too): content with markers, every source, the
    member's ratings, retrieval events. The read is written to the audit log."""
    conv = conversations.get_conversation(session, conversation_id, None)
    trail.record(session, "conversation.read", f"conversation:{conv.id}", {"user_id": conv.user_id})
    messages = conversations.list_messages(session, conv.id)
    ratings = feedback.feedback_of(session, (str(m.id) for m in messages), conv.user_id)
    return AdminConversation(
        id=str(conv.id),
        user_id=str(conv.user_id),
        user_name=users.user_name(session, conv.user_id),
        title=conv.title,
        created_at=conv.created_at,
        updated_at=conv.updated_at,
        hidden_at=conv.hidden_at,
        messages=[admin_message(m, ratings.get(str(m.id))) for m in messages],
        retrieval_events=[
            RetrievalEventRow.model_validate(analytics.event_dict(event))
            for m in messages
            if m.role == "assistant"
            for event in conversations.list_events(session, str(m.id))
        ],
    )


@router.get("/analytics/headline", response_model=HeadlineNumbers)
def headline_numbers(
    session: SessionDep,
    admin: AdminUser,
    since: datetime | None = Query(None),
    until: datetime | None = Query(None),
) -> Any:
    """Questions asked in ``[since, until)``, answers that said "not found", and answers rated
    "Not helpful", with their shares of the answers."""
    numbers = headline.headline(
        session, since=since, until=until, small_talk_replies=SMALL_TALK_REPLIES
    )
    return HeadlineNumbers(
        since=since,
        until=until,
        questions=numbers.questions,
        answers=numbers.answers,
        small_talk=numbers.small_talk,
        not_found=numbers.not_found,
        not_found_rate=headline.rate(numbers.not_found, numbers.answers),
        rated_down=numbers.rated_down,
        rated_down_rate=headline.rate(numbers.rated_down, numbers.answers),
    )


@router.get("/analytics/entry-performance", response_model=list[EntryPerformanceRow])
def entry_performance(
    session: SessionDep,
    admin: AdminUser,
    period: Literal["day", "week", "month", "all"] = Query("all"),
    since: datetime | None = Query(None),
    until: datetime | None = Query(None),
    card_id: str | None = Query(None, max_length=200),
    audience: str | None = Query(
        None,
        pattern=AUDIENCE_PATTERN.pattern,
        description="Only the conversations of members in this group (their groups now)",
    ),
) -> Any:
    """Per card and period: times retrieved, times cited, cite rate, mean rank, last cited, and
    the thumbs up/down members gave the answers that cited it (with the helpful rate), and the
    card's audiences; with ``audience``, of the members of that group only."""
    rows = analytics.entry_performance(
        session, period=period, since=since, until=until, card_id=card_id, audience=audience
    )
    return [EntryPerformanceRow.model_validate(row) for row in rows]


@router.get("/analytics/retrieval-events", response_model=list[RetrievalEventRow])
def retrieval_events(
    session: SessionDep,
    admin: AdminUser,
    trail: AuditTrail,
    card_id: str | None = Query(None, max_length=200),
    hybrid_path: Literal["full", "rrf_only", "dense_only", "none"] | None = Query(
        None, description="'none' selects turns where nothing was retrieved"
    ),
    since: datetime | None = Query(None),
    until: datetime | None = Query(None),
    cited: bool | None = Query(None),
    limit: int = Query(100, ge=1, le=1000),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
) -> Any:
    """The retrieval-event log (one row per retrieved card per turn), newest first. It holds
    the queries members' questions were retrieved with: the read is written to the audit log."""
    trail.record(session, "retrieval_events.read", "report:retrieval-events")
    rows = analytics.retrieval_events(
        session,
        card_id=card_id,
        hybrid_path=hybrid_path,
        since=since,
        until=until,
        cited=cited,
        limit=limit,
        offset=offset,
    )
    return [RetrievalEventRow.model_validate(row) for row in rows]


@router.get("/analytics/feedback", response_model=FeedbackReport)
def feedback_summary(
    session: SessionDep,
    admin: AdminUser,
    trail: AuditTrail,
    since: datetime | None = Query(None),
    until: datetime | None = Query(None),
    limit: int = Query(20, ge=1, le=500, description="Cards and answers returned (each)"),
) -> Any:
    """Thumbs up and down members gave in ``[since, until)``: totals and helpful rate, per
    cited card (most thumbs down first), and the rated answers, thumbs down first, newest first
    (content as stored, markers kept, with the question and the conversation)."""
    report = feedback_report.feedback_report(session, since=since, until=until, limit=limit)
    trail.record(session, "feedback.read", "report:feedback")
    return FeedbackReport(
        since=since,
        until=until,
        up=report.up,
        down=report.down,
        helpful_rate=report.helpful_rate,
        cards=[FeedbackCard(**dataclasses.asdict(c)) for c in report.cards],
        worst=[RatedAnswer(**dataclasses.asdict(a)) for a in report.worst],
    )


@router.get("/analytics/knowledge-gaps", response_model=KnowledgeGapReport)
def knowledge_gaps(
    session: SessionDep,
    runtime: RuntimeDep,
    admin: AdminUser,
    trail: AuditTrail,
    period: Literal["day", "week", "month"] = Query("week"),
    since: datetime | None = Query(None),
    until: datetime | None = Query(None),
    limit: int = Query(50, ge=1, le=500, description="Groups returned, largest first"),
    audience: str | None = Query(
        None,
        pattern=AUDIENCE_PATTERN.pattern,
        description="Only the questions of members in this group (their groups now)",
    ),
) -> Any:
    """Two lists grouped by similar question, with counts per period: the questions the
    knowledge base does not cover (the articles to write next), and the covered questions
    answered badly (rated "Not helpful" or with low support: the cards to fix); with
    ``audience``, of the members of that group only."""
    s = runtime.settings
    rule = GapRule(min_coverage=s.knowledge_gap_min_coverage, low_support=s.knowledge_gap_support)
    found = gaps.gap_questions(session, rule=rule, since=since, until=until, audience=audience)
    trail.record(session, "knowledge_gaps.read", "report:knowledge-gaps")
    listed = len(found["gap"]) + len(found["answered_badly"])
    return KnowledgeGapReport(
        period=period,
        low_support_below=rule.low_support,
        min_coverage=rule.min_coverage,
        since=since,
        until=until,
        audience=audience,
        questions=len(found["gap"]),
        truncated=listed >= gaps.MAX_QUESTIONS,
        groups=_gap_groups(found["gap"], period, limit),
        answered_badly_questions=len(found["answered_badly"]),
        answered_badly=_gap_groups(found["answered_badly"], period, limit),
    )


def _gap_groups(
    questions: list[gaps.GapQuestion], period: gaps.Period, limit: int
) -> list[KnowledgeGap]:
    return [
        KnowledgeGap(
            question=g.question,
            count=g.count,
            not_found=g.not_found,
            low_coverage=g.low_coverage,
            rated_down=g.rated_down,
            low_support=g.low_support,
            last_asked=g.last_asked,
            per_period=[
                KnowledgeGapPeriod(period_start=p, count=n) for p, n in sorted(g.per_period.items())
            ],
            examples=[KnowledgeGapQuestion(**dataclasses.asdict(q)) for q in g.examples],
        )
        for g in gaps.group_questions(questions, period=period)[:limit]
    ]


@router.get("/abstention", response_model=AbstentionPublic)
def abstention(runtime: RuntimeDep, admin: AdminUser) -> Any:
    """The abstention thresholds in use, where they come from (fitted on this KB at ingest, or
    set by the operator), and how the stored calibration did on its probes."""
    return abstention_public(runtime.thresholds)


def _budget(settings: Settings) -> ExposureBudget:
    return ExposureBudget(
        cards=settings.exposure_budget_cards, window_hours=settings.exposure_window_hours
    )


@router.get("/analytics/exposure", response_model=ExposureReport)
def exposure(
    session: SessionDep,
    runtime: RuntimeDep,
    admin: AdminUser,
    since: datetime | None = Query(None),
    until: datetime | None = Query(None),
    limit: int = Query(100, ge=1, le=1000, description="Members returned, most exposed first"),
) -> Any:
    """Members ranked by internal exposure over ``[since, until)``: distinct internal cards,
    share of the internal corpus, sentences repeated verbatim, and answers restricted by the
    exposure budget (the alert)."""
    ranking = exposure_report.exposure_ranking(session, since=since, until=until, limit=limit)
    return ExposureReport(
        since=since,
        until=until,
        budget=_budget(runtime.settings),
        internal_cards=ranking.internal_cards,
        members_total=ranking.members,
        members=[ExposureMember(**dataclasses.asdict(m)) for m in ranking.rows],
    )


@router.get("/analytics/exposure/{user_id}", response_model=MemberExposureReport)
def member_exposure(
    user_id: int,
    session: SessionDep,
    runtime: RuntimeDep,
    admin: AdminUser,
    trail: AuditTrail,
    since: datetime | None = Query(None),
    until: datetime | None = Query(None),
    limit: int = Query(50, ge=1, le=500, description="Turns returned, newest first"),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
) -> Any:
    """One member's exposure: totals, per UTC day, and the answers behind it (newest first)."""
    report = exposure_report.member_exposure(
        session, user_id, since=since, until=until, limit=limit, offset=offset
    )
    trail.record(session, "exposure.read", f"user:{user_id}")
    return MemberExposureReport(
        since=since,
        until=until,
        budget=_budget(runtime.settings),
        internal_cards=report.internal_cards,
        member=ExposureMember(**dataclasses.asdict(report.member)),
        days=[ExposureDay(**dataclasses.asdict(d)) for d in report.days],
        turns_total=report.turns_total,
        offset=offset,
        limit=limit,
        turns=[ExposureTurn(**dataclasses.asdict(t)) for t in report.turns],
    )
