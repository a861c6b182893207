"""Admin routes for members' data: the audit log (read only: no route edits or deletes a
line), the retention settings in force, and erasure on request (docs/privacy.md)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from citewall.api.audit import AuditTrail
from citewall.api.deps import AdminUser, RuntimeDep, SessionDep
from citewall.api.privacy_schemas import (
    AuditEntryPublic,
    AuditPage,
    ErasureReceipt,
    RetentionSettings,
)
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.schemas import MAX_OFFSET
from citewall.chat.smalltalk import SMALL_TALK_REPLIES
from citewall.errors import UserError
from citewall.storage import audit, erasure
from citewall.storage.audit import AuditAction

router = APIRouter(
    prefix="/api/v1/admin", tags=["admin"], responses=error_responses(*AUTHENTICATED, 403, 404)
)


@router.get("/audit", response_model=AuditPage)
def audit_log(
    session: SessionDep,
    admin: AdminUser,
    action: AuditAction | None = Query(None, description="Only lines of this action"),
    limit: int = Query(50, ge=1, le=500),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
) -> Any:
    """The audit log, newest first: every admin read of members' words, every export, every
    erasure and every change to the knowledge base, with who, when and from which address."""
    rows, total = audit.entries(session, action=action, limit=limit, offset=offset)
    return AuditPage(
        total=total,
        limit=limit,
        offset=offset,
        entries=[AuditEntryPublic.model_validate(r, from_attributes=True) for r in rows],
    )


@router.get("/retention", response_model=RetentionSettings)
def retention_settings(runtime: RuntimeDep, admin: AdminUser) -> Any:
    """How long members' words and audit lines are kept (``CITEWALL_RETENTION_DAYS``,
    ``CITEWALL_AUDIT_RETENTION_DAYS``; None: forever)."""
    s = runtime.settings
    return RetentionSettings(
        retention_days=s.retention_days, audit_retention_days=s.audit_retention_days
    )


@router.post("/users/{user_id}/erasure", response_model=ErasureReceipt)
def erase_user(
    user_id: int, session: SessionDep, runtime: RuntimeDep, admin: AdminUser, trail: AuditTrail
) -> Any:
    """Erase a member's personal data on their request: their name and email, their tokens and
    sessions, their conversations' words. What the analytics count stays, under a fresh
    pseudonymous user. The request is recorded (and written to the audit log) before it is
    carried out; the receipt says what was removed, when and by whom."""
    if user_id == admin.id:
        raise UserError("an admin cannot erase themself here; use `citewall users erase`")
    request = erasure.request_erasure(
        session,
        user_id,
        requested_by=admin.name,
        now=runtime.clock(),
        audit=trail.event("erasure", f"user:{user_id}"),
    )
    done = erasure.carry_out(
        runtime.session_factory,
        request.id,
        clock=runtime.clock,
        canned_replies=SMALL_TALK_REPLIES,
    )
    return ErasureReceipt.of(done)


@router.get("/erasures", response_model=list[ErasureReceipt])
def erasure_receipts(
    session: SessionDep,
    admin: AdminUser,
    limit: int = Query(50, ge=1, le=500),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
) -> Any:
    """The erasure receipts, newest first."""
    rows = erasure.list_erasures(session, limit=limit, offset=offset)
    return [ErasureReceipt.of(r) for r in rows]
