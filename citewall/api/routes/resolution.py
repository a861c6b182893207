"""Resolution analytics (admin): how many conversations the assistant resolved, escalated to a
person, left unresolved or saw abandoned, per day or week, and the conversations behind each
number (``storage.resolution``; docs/handoff.md, "Resolution")."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import Any, Literal

from fastapi import APIRouter, Query

from citewall.api.deps import AdminUser, RuntimeDep, SessionDep
from citewall.api.resolution_schemas import (
    OutcomeConversationPublic,
    OutcomeCounts,
    ResolutionPeriodPublic,
    ResolutionReportPublic,
)
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.schemas import MAX_OFFSET
from citewall.chat.smalltalk import SMALL_TALK_REPLIES
from citewall.storage import resolution
from citewall.storage.resolution import Outcome, ResolutionPeriodRow

router = APIRouter(
    prefix="/api/v1/admin/analytics",
    tags=["admin"],
    responses=error_responses(*AUTHENTICATED, 403),
)


def _period(row: ResolutionPeriodRow) -> ResolutionPeriodPublic:
    fields = dataclasses.asdict(row)
    return ResolutionPeriodPublic(**{**fields, "counts": OutcomeCounts(**row.counts)})


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


@router.get("/resolution/conversations", response_model=list[OutcomeConversationPublic])
def outcome_conversations(
    session: SessionDep,
    runtime: RuntimeDep,
    admin: AdminUser,
    outcome: Outcome | None = Query(None),
    since: datetime | None = Query(None),
    until: datetime | None = Query(None),
    limit: int = Query(100, ge=1, le=resolution.MAX_LISTED),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
) -> Any:
    """The conversations behind a number of the report: begun in ``[since, until)``, with
    ``outcome`` when given, newest first."""
    rows = resolution.outcome_conversations(
        session,
        now=runtime.clock(),
        window=timedelta(hours=runtime.settings.resolution_window_hours),
        outcome=outcome,
        since=since,
        until=until,
        small_talk_replies=SMALL_TALK_REPLIES,
        limit=limit,
        offset=offset,
    )
    return [OutcomeConversationPublic(**dataclasses.asdict(r)) for r in rows]
