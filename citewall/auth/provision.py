"""A verified identity becomes a citewall user: found by issuer and subject, or created."""

from __future__ import annotations

import logging

from sqlalchemy.orm import Session

from citewall.auth.rejection import TokenRejected
from citewall.auth.verifier import Claims
from citewall.storage.models import Role, User
from citewall.storage.users import provision_external_user

log = logging.getLogger("citewall.auth")


def active_user(session: Session, claims: Claims, role: Role, path: str) -> User:
    """The user ``claims`` name (created on first sight with ``role``); ``TokenRejected``
    ("disabled") for a disabled one. ``path`` names the sign-in path in the log line."""
    user = provision_external_user(
        session,
        issuer=claims.issuer,
        subject=claims.subject,
        readable=claims.readable,
        email=claims.email,
        role=role,
    )
    if user.disabled_at is not None:
        log.warning("%s sign-in refused: disabled: user %r is disabled", path, user.name)
        raise TokenRejected("disabled", f"user {user.name!r} is disabled")
    return user
