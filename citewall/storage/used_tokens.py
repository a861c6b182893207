"""Host tokens already exchanged for a session: a host token signs in once, on every replica.

The rows live in the database every replica shares. ``use_host_token`` inserts the token's key
in the caller's transaction, so the mark and the session it pays for commit together (a
sign-in that fails later, say at the rate limit, leaves the token unused); the primary key
makes the second of two parallel uses fail, on SQLite and PostgreSQL alike. Each use also
deletes up to ``PURGE_BATCH`` rows of tokens that can no longer verify, so the table holds
about one row per token exchanged within the last token lifetime.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from citewall.storage.db import begin_write
from citewall.storage.failures import storage_errors
from citewall.storage.models import UsedHostToken

#: Most expired rows one use deletes: enough to outpace sign-ins, small enough to stay cheap.
PURGE_BATCH = 100


def host_token_used(session: Session, token_key: str) -> bool:
    """Whether the token ``token_key`` names was already exchanged (a cheap early refusal; the
    insert of ``use_host_token`` is what decides)."""
    with storage_errors(session, "checking a host token"):
        found = session.get(UsedHostToken, token_key)
    return found is not None


def use_host_token(session: Session, token_key: str, expires_at: datetime, now: datetime) -> bool:
    """Mark the token ``token_key`` names as used until ``expires_at``, in ``session``'s
    transaction (flushed, not committed: the caller commits it with what the token pays for).

    False when it was already used (the transaction is rolled back); expired rows are purged.
    """
    with storage_errors(session, "marking a host token used"):
        begin_write(session)
        session.add(UsedHostToken(token_key=token_key, expires_at=expires_at))
        try:
            session.flush()
        except IntegrityError:  # the key is there: used before, or by a parallel sign-in
            session.rollback()
            return False
        expired = (
            select(UsedHostToken.token_key)
            .where(UsedHostToken.expires_at < now)
            .order_by(UsedHostToken.expires_at)
            .limit(PURGE_BATCH)
        )
        session.execute(
            delete(UsedHostToken).where(UsedHostToken.token_key.in_(expired)),
            execution_options={"synchronize_session": False},
        )
    return True
