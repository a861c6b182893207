"""Handoff to a person: a member asks for one on their own conversation; admins see the
outbox (pending, delivered and failed handoffs, with every delivery attempt)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Query

from citewall.api.audit import AuditTrail
from citewall.api.deps import AdminUser, CurrentUser, RuntimeDep, SessionDep
from citewall.api.handoff_schemas import (
    AdminHandoff,
    AdminHandoffPage,
    HandoffAttemptRow,
    HandoffReceipt,
    HandoffRequest,
)
from citewall.api.json_body import StrictJsonRoute
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.schemas import MAX_OFFSET
from citewall.handoff.request import request_handoff
from citewall.storage import handoffs
from citewall.storage.handoffs import HandoffListing
from citewall.storage.models import HandoffStatus

router = APIRouter(
    prefix="/api/v1",
    tags=["handoff"],
    responses=error_responses(*AUTHENTICATED, 404),
    route_class=StrictJsonRoute,
)


@router.post(
    "/conversations/{conversation_id}/handoff",
    response_model=HandoffReceipt,
    status_code=202,
    responses=error_responses(
        400, described={409: "No helpdesk is configured: handoff to a person is off."}
    ),
)
def ask_for_a_person(
    conversation_id: str,
    session: SessionDep,
    runtime: RuntimeDep,
    user: CurrentUser,
    body: HandoffRequest | None = Body(default=None),
) -> Any:
    """Ask for a person on one of your conversations, with an optional message (at most
    2,000 characters). The request is stored before the helpdesk is called, and its delivery
    retried until the helpdesk takes it. 404 unless the conversation is yours; 409 when no
    helpdesk is configured."""
    row, _ = request_handoff(
        session,
        runtime.settings,
        member=user,
        conversation_id=conversation_id,
        message=body.message if body is not None else None,
        now=runtime.clock(),
    )
    return HandoffReceipt(id=row.id, conversation_id=row.conversation_id, created_at=row.created_at)


def admin_handoff(listing: HandoffListing) -> AdminHandoff:
    h = listing.handoff
    return AdminHandoff(
        id=h.id,
        conversation_id=h.conversation_id,
        user_id=h.user_id,
        user_name=listing.user_name,
        message=h.message,
        status=h.status,
        attempts=h.attempts,
        next_attempt_at=h.next_attempt_at if h.status == "pending" else None,
        last_error=h.last_error,
        delivered_at=h.delivered_at,
        created_at=h.created_at,
        attempt_log=[
            HandoffAttemptRow(
                attempted_at=a.attempted_at,
                status_code=a.status_code,
                error=a.error,
                duration_ms=a.duration_ms,
                replica=a.replica,
            )
            for a in listing.attempts
        ],
    )


@router.get(
    "/admin/handoffs",
    response_model=AdminHandoffPage,
    tags=["admin"],
    responses=error_responses(403),
)
def list_handoffs(
    session: SessionDep,
    admin: AdminUser,
    trail: AuditTrail,
    status: HandoffStatus | None = Query(None, description="Only pending, delivered or failed"),
    limit: int = Query(50, ge=1, le=500),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
) -> Any:
    """The handoff outbox, newest first: who asked, the delivery status, the next attempt of a
    pending one, the last error, and every attempt. The members' messages are in it: written to
    the audit log."""
    rows, counts = handoffs.list_handoffs(session, status=status, limit=limit, offset=offset)
    trail.record(session, "handoffs.read", "report:handoffs", {"listed": len(rows)})
    return AdminHandoffPage(
        pending=counts["pending"],
        delivered=counts["delivered"],
        failed=counts["failed"],
        handoffs=[admin_handoff(r) for r in rows],
    )
