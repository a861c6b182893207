"""A verified identity becomes a citewall user: found by issuer and subject, or created."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sqlalchemy.orm import Session

from citewall.auth.rejection import TokenRejected
from citewall.auth.verifier import Claims
from citewall.kb.audiences import audience_problem
from citewall.storage.models import Role, User
from citewall.storage.users import provision_external_user

log = logging.getLogger("citewall.auth")


def member_groups(claimed: Sequence[str]) -> list[str]:
    """The claimed groups that are group names (``kb.audiences``); any other string names no
    audience a card can have, so it is left out (and logged) rather than refusing the sign-in.

    >>> member_groups(["enterprise", "Enterprise Plan", "beta"])
    ['beta', 'enterprise']
    """
    kept = sorted({g for g in claimed if audience_problem(g) is None})
    if len(kept) < len(set(claimed)):
        log.info(
            "member sign-in: %d claimed group(s) are not group names", len(set(claimed)) - len(kept)
        )
    return kept


def active_user(
    session: Session,
    claims: Claims,
    role: Role,
    path: str,
    *,
    groups: Sequence[str] | None = None,
) -> User:
    """The user ``claims`` name (created on first sight with ``role``); ``TokenRejected``
    ("disabled") for a disabled one. ``path`` names the sign-in path in the log line;
    ``groups``, when given, replace the user's groups (a member's, at every sign-in)."""
    user = provision_external_user(
        session,
        issuer=claims.issuer,
        subject=claims.subject,
        readable=claims.readable,
        email=claims.email,
        role=role,
        groups=groups,
    )
    if user.disabled_at is not None:
        log.warning("%s sign-in refused: disabled: user %r is disabled", path, user.name)
        raise TokenRejected("disabled", f"user {user.name!r} is disabled")
    return user
