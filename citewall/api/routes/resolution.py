"""Resolution analytics (admin): how many conversations the assistant resolved, escalated to a
person, left unresolved or saw abandoned, per day or week, per top card and per knowledge-gap
group, and the conversations behind each number (``storage.resolution``,
``storage.resolution_groups``; docs/handoff.md, "Resolution")."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import Any, Literal

from fastapi import APIRouter, Query

from citewall.api.audit import AuditTrail
from citewall.api.deps import AdminUser, RuntimeDep, SessionDep
from citewall.api.resolution_schemas import (
    CardResolutionPublic,
    GapResolutionPublic,
    OutcomeConversationPublic,
    OutcomeCounts,
    ResolutionPeriodPublic,
    ResolutionReportPublic,
)
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.schemas import MAX_OFFSET
from citewall.chat.smalltalk import SMALL_TALK_REPLIES
from citewall.errors import NotFoundError
from citewall.retrieval.covered import GapRule
from citewall.storage import resolution, resolution_groups
from citewall.storage.resolution import Outcome, ResolutionPeriodRow
from citewall.storage.resolution_groups import GroupResolution

router = APIRouter(
    prefix="/api/v1/admin/analytics",
    tags=["admin"],
    responses=error_responses(*AUTHENTICATED, 403),
)


def _period(row: ResolutionPeriodRow) -> ResolutionPeriodPublic:
    fields = dataclasses.asdict(row)
    return ResolutionPeriodPublic(**{**fields, "counts": OutcomeCounts(**row.counts)})


def _outcomes(group: GroupResolution) -> dict[str, Any]:
    return {**dataclasses.asdict(group), "counts": OutcomeCounts(**group.counts)}


@router.get("/resolution", response_model=ResolutionReportPublic)
def resolution_report(
    session: SessionDep,
    runtime: RuntimeDep,
    admin: AdminUser,
    period: Literal["day", "week"] = Query("week"),
    since: datetime | None = Query(None, description="Conversations begun at or after"),
    until: datetime | None = Query(None, description="Conversations begun before"),
) -> Any:
    """Conversations begun in ``[since, until)`` per day or week (UTC) by outcome: resolved,
    escalated, unresolved, abandoned, and open (its window has not closed), with the shares of
    the decided ones. "Resolved" means no sign of failure, not a confirmed fix."""
    hours = runtime.settings.resolution_window_hours
    report = resolution.resolution_report(
        session,
        now=runtime.clock(),
        window=timedelta(hours=hours),
        period=period,
        since=since,
        until=until,
        small_talk_replies=SMALL_TALK_REPLIES,
    )
    return ResolutionReportPublic(
        period=period,
        window_hours=hours,
        since=since,
        until=until,
        periods=[_period(p) for p in report.periods],
        totals=_period(report.totals) if report.totals is not None else None,
    )


@router.get(
    "/resolution/conversations",
    response_model=list[OutcomeConversationPublic],
    responses=error_responses(404),
)
def outcome_conversations(
    session: SessionDep,
    runtime: RuntimeDep,
    admin: AdminUser,
    trail: AuditTrail,
    outcome: Outcome | None = Query(None),
    # No database stores NUL in text: such an id is refused up front, not sent to the query.
    top_card_id: str | None = Query(
        None, max_length=200, pattern=r"^[^\x00]+$", description="Whose top card it is"
    ),
    gap_group: str | None = Query(
        None,
        max_length=200,
        pattern=r"^[^\x00]+$",
        description="The knowledge-gap group whose conversations these are (its group_id)",
    ),
    since: datetime | None = Query(None),
    until: datetime | None = Query(None),
    limit: int = Query(100, ge=1, le=resolution.MAX_LISTED),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
) -> Any:
    """The conversations behind a number of the report: begun in ``[since, until)``, with
    ``outcome`` and ``top_card_id`` when given, newest first. With ``gap_group`` (a
    ``group_id`` of ``/resolution/gaps``), the conversations of that knowledge-gap group, and
    ``[since, until)`` is the window its questions were asked in, as for ``/resolution/gaps``
    (404 when no group of that window goes by the id)."""
    s = runtime.settings
    conversation_ids: list[str] | None = None
    if gap_group is not None:
        rule = GapRule(
            min_coverage=s.knowledge_gap_min_coverage, low_support=s.knowledge_gap_support
        )
        conversation_ids = resolution_groups.gap_group_conversations(
            session, rule=rule, group_id=gap_group, since=since, until=until
        )
        if conversation_ids is None:
            raise NotFoundError(
                f"no knowledge-gap group {gap_group!r} among the questions of this window: "
                "take group_id from /resolution/gaps with the same since and until"
            )
        since = until = None  # the window chose the group's questions
    rows = resolution.outcome_conversations(
        session,
        now=runtime.clock(),
        window=timedelta(hours=s.resolution_window_hours),
        outcome=outcome,
        top_card_id=top_card_id,
        conversation_ids=conversation_ids,
        since=since,
        until=until,
        small_talk_replies=SMALL_TALK_REPLIES,
        limit=limit,
        offset=offset,
    )
    # The titles are members' first questions.
    trail.record(session, "conversations.list", "report:resolution", {"listed": len(rows)})
    return [OutcomeConversationPublic(**dataclasses.asdict(r)) for r in rows]


@router.get("/resolution/cards", response_model=list[CardResolutionPublic])
def card_resolution(
    session: SessionDep,
    runtime: RuntimeDep,
    admin: AdminUser,
    since: datetime | None = Query(None, description="Conversations begun at or after"),
    until: datetime | None = Query(None, description="Conversations begun before"),
    limit: int = Query(50, ge=1, le=500, description="Cards returned, most conversations first"),
) -> Any:
    """Conversations begun in ``[since, until)`` by top card (the card ranked first for the
    conversation's first answer that retrieved anything) and outcome, with the shares."""
    rows = resolution_groups.card_resolution(
        session,
        now=runtime.clock(),
        window=timedelta(hours=runtime.settings.resolution_window_hours),
        since=since,
        until=until,
        small_talk_replies=SMALL_TALK_REPLIES,
        limit=limit,
    )
    return [
        CardResolutionPublic(
            card_id=r.card_id,
            title=r.title,
            conversations=r.conversations,
            **_outcomes(r.outcomes),
        )
        for r in rows
    ]


@router.get("/resolution/gaps", response_model=list[GapResolutionPublic])
def gap_resolution(
    session: SessionDep,
    runtime: RuntimeDep,
    admin: AdminUser,
    trail: AuditTrail,
    since: datetime | None = Query(None, description="Questions asked at or after"),
    until: datetime | None = Query(None, description="Questions asked before"),
    limit: int = Query(50, ge=1, le=500, description="Groups returned per list, largest first"),
) -> Any:
    """The knowledge-gap groups (both lists, grouped as the knowledge-gaps report groups them)
    of the questions asked in ``[since, until)``, with the outcomes of their conversations."""
    s = runtime.settings
    rule = GapRule(min_coverage=s.knowledge_gap_min_coverage, low_support=s.knowledge_gap_support)
    rows = resolution_groups.gap_resolution(
        session,
        rule=rule,
        now=runtime.clock(),
        window=timedelta(hours=s.resolution_window_hours),
        since=since,
        until=until,
        small_talk_replies=SMALL_TALK_REPLIES,
        limit=limit,
    )
    # A group is named by a member's question, as in the knowledge-gaps report.
    trail.record(session, "knowledge_gaps.read", "report:resolution-gaps")
    return [
        GapResolutionPublic(
            verdict=r.verdict,
            question=r.question,
            questions=r.questions,
            group_id=r.group_id,
            conversations=r.conversations,
            **_outcomes(r.outcomes),
        )
        for r in rows
    ]
