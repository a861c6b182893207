"""Wire schemas of the privacy routes: the audit log, erasure receipts, the retention
settings (admin), and a member's export (member: the member views, nothing more)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from citewall.api.schemas import ConversationPublic


class AuditEntryPublic(BaseModel):
    """One line of the audit log."""

    id: int
    at: datetime
    actor: str
    actor_user_id: int | None
    via: str
    action: str
    target: str
    address: str | None
    detail: dict[str, Any]


class AuditPage(BaseModel):
    total: int
    limit: int
    offset: int
    entries: list[AuditEntryPublic]


class RetentionSettings(BaseModel):
    """How long members' words and the audit log are kept (None: forever)."""

    retention_days: int | None
    audit_retention_days: int | None


class ErasureReceipt(BaseModel):
    """What an erasure removed, when, and who asked for it."""

    id: int
    user_id: int
    requested_by: str
    requested_at: datetime
    status: str
    completed_at: datetime | None
    #: Values removed, by ``table.column`` (or ``api_tokens`` / ``sessions``: rows deleted).
    removed: dict[str, int]
    #: Rows kept for the analytics, under a pseudonymous user, by table.
    kept: dict[str, int]


class MemberExport(BaseModel):
    """A member's own conversations, as the member views show them (prose only, external
    sources only)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    exported_at: datetime
    conversations: list[ConversationPublic]
