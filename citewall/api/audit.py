"""Who is calling, as the audit log records it: the user (a token's user, or the admin the
identity-aware proxy's assertion names), how they came, and the address the request came from.

Routes that show members' words or change their data declare ``AuditTrail`` and append a line
before they answer; if the line cannot be written the request fails (503) and shows nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from citewall.api.deps import CallerDep
from citewall.storage import audit
from citewall.storage.audit import Actor, AuditAction


@dataclass(frozen=True, slots=True)
class AuditActor(Actor):
    """The caller of one request, for its audit lines."""

    def record(
        self,
        session: Session,
        action: AuditAction,
        target: str,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        """Append one line (committed) for this caller."""
        audit.append(session, self.event(action, target, detail))


def get_audit_actor(request: Request, caller: CallerDep) -> AuditActor:
    """The caller as the audit log names them. The address is the connection's peer
    (``citewall serve`` does not trust forwarded headers)."""
    return AuditActor(
        name=caller.user.name,
        user_id=caller.user.id,
        via=caller.via,
        address=request.client.host if request.client is not None else None,
    )


AuditTrail = Annotated[AuditActor, Depends(get_audit_actor)]
