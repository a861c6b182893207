"""Wire schemas of the handoff to a person: the member's request and its receipt, and the
admin's view of the outbox."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from citewall.storage.handoffs import MESSAGE_MAX_CHARS
from citewall.storage.models import HandoffStatus


class HandoffRequest(BaseModel):
    """Asking for a person, with an optional message for them."""

    model_config = ConfigDict(extra="forbid")

    message: str | None = Field(
        default=None, description=f"At most {MESSAGE_MAX_CHARS} characters once trimmed."
    )


class HandoffReceipt(BaseModel):
    """The request was stored: the helpdesk will receive it (delivery is retried until it
    does). The same receipt again when the conversation has not moved on since."""

    model_config = ConfigDict(extra="forbid")

    id: str
    conversation_id: str
    created_at: datetime


class HandoffAttemptRow(BaseModel):
    """One delivery attempt (``status_code`` None: no answer came)."""

    attempted_at: datetime
    status_code: int | None
    error: str | None
    duration_ms: float
    replica: str


class AdminHandoff(BaseModel):
    """A handoff in the outbox: who asked, where it stands, and every attempt."""

    id: str
    conversation_id: str
    user_id: int
    user_name: str
    message: str | None
    status: HandoffStatus
    attempts: int
    next_attempt_at: datetime | None
    last_error: str | None
    delivered_at: datetime | None
    created_at: datetime
    attempt_log: list[HandoffAttemptRow]


class AdminHandoffPage(BaseModel):
    """A page of handoffs, newest first, with the count per status (all of them)."""

    pending: int
    delivered: int
    failed: int
    handoffs: list[AdminHandoff]
