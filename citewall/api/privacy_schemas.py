"""Wire schemas of the privacy routes: the audit log, erasure receipts, the retention
settings (admin), and a member's export (member: the member views, nothing more)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from citewall.api.schemas import ConversationPublic
from citewall.storage.models import Erasure


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
    """What an erasure removed, when, and who asked for it: the one record both the admin API
    and ``citewall users erase`` give (``of`` a stored request)."""

    model_config = ConfigDict(extra="forbid")

    id: int
    user_id: int
    requested_by: str
    #: When the request was recorded (committed before anything was removed).
    requested_at: datetime
    status: str
    #: When the last of it was done (None while it is not).
    completed_at: datetime | None
    #: Values removed, by ``table.column`` (or ``api_tokens`` / ``sessions``: rows deleted).
    removed: dict[str, int]
    #: Rows kept for the analytics, under a pseudonymous user, by table.
    kept: dict[str, int]

    @classmethod
    def of(cls, row: Erasure) -> ErasureReceipt:
        """The receipt of the stored erasure request ``row``."""
        return cls(
            id=row.id,
            user_id=row.user_id,
            requested_by=row.requested_by,
            requested_at=row.requested_at,
            status=row.status,
            completed_at=row.completed_at,
            removed={str(k): int(v) for k, v in row.receipt.get("removed", {}).items()},
            kept={str(k): int(v) for k, v in row.receipt.get("kept", {}).items()},
        )


class MemberHandoffPublic(BaseModel):
    """A request for a person the member made: which conversation, when, and their note."""

    model_config = ConfigDict(extra="forbid")

    id: str
    conversation_id: str
    created_at: datetime
    #: The member's note (None: they wrote none, or it was removed under retention).
    message: str | None


class MemberExport(BaseModel):
    """A member's own conversations, as the member views show them (prose only, external
    sources only), and their requests for a person."""

    model_config = ConfigDict(extra="forbid")

    name: str
    exported_at: datetime
    conversations: list[ConversationPublic]
    handoffs: list[MemberHandoffPublic]
