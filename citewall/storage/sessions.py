"""Sessions: the bearer tokens citewall issues when a host site signs a member in.

A session is an ``ApiToken`` row with ``expires_at`` set: the same opaque ``cw_`` token (only
its sha256 stored), so it is checked by ``users.authenticate`` like any token, works on every
replica (it lives in the database) and is revoked like one (sign-out, ``citewall users
revoke``). An API token made by ``citewall users add`` has no expiry and is not a session.
"""

from __future__ import annotations

import hmac
from datetime import datetime
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from citewall.errors import UserError
from citewall.storage.failures import storage_errors
from citewall.storage.models import ApiToken, User
from citewall.storage.users import DISPLAY_PREFIX_LENGTH, hash_token, new_token, token_active

#: What ``revoke_session`` found: a session it revoked, an API token (left alone), or nothing
#: usable (malformed, unknown, revoked, expired).
Revocation = Literal["revoked", "not_a_session", "unknown"]


def issue_session(session: Session, user: User, expires_at: datetime) -> str:
    """A new session token for ``user`` ending at ``expires_at``, returned in plain (only now).

    ``UserError`` for a disabled user: they get no new session.
    """
    if user.disabled_at is not None:
        raise UserError(f"user {user.name!r} is disabled; no session is issued")
    token = new_token()
    with storage_errors(session, "issuing a session"):
        session.add(
            ApiToken(
                user_id=user.id,
                token_hash=hash_token(token),
                prefix=token[:DISPLAY_PREFIX_LENGTH],
                expires_at=expires_at,
            )
        )
        session.commit()
    return token


def is_session(session: Session, token: str) -> bool:
    """Whether ``token`` is a session (one sign-out revokes), not an API token."""
    digest = hash_token(token)
    with storage_errors(session, "checking a session"):
        row = session.scalar(select(ApiToken).where(ApiToken.token_hash == digest))
    return row is not None and row.expires_at is not None


def revoke_session(session: Session, token: str, now: datetime) -> Revocation:
    """Revoke the session ``token`` (sign-out). An API token is not touched (revoke those with
    ``citewall users revoke-token``)."""
    digest = hash_token(token)
    with storage_errors(session, "revoking a session"):
        row = session.scalar(select(ApiToken).where(ApiToken.token_hash == digest))
        if row is None or not hmac.compare_digest(row.token_hash, digest):
            return "unknown"
        if not token_active(row, now):
            return "unknown"
        if row.expires_at is None:
            return "not_a_session"
        row.revoked_at = now
        session.commit()
    return "revoked"
