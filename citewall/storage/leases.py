"""Named leases in the database: one holder at a time across every replica, on SQLite and
PostgreSQL alike (a row per name, taken under the write lock or a row lock)::

    if acquire(session, "retention", holder, now=now, ttl=timedelta(minutes=30)):
        ...  # renew with acquire() again while working; release() when done

A holder that dies keeps the lease until ``expires_at``; then the next one takes it over.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from citewall.storage.db import begin_write
from citewall.storage.failures import storage_errors
from citewall.storage.models import Lease


def holder_name() -> str:
    """A holder name no other process shares: host, pid and a random part."""
    return f"{socket.gethostname()[:60]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def acquire(session: Session, name: str, holder: str, *, now: datetime, ttl: timedelta) -> bool:
    """Take (or renew) the lease ``name`` for ``holder`` until ``now + ttl``; False while
    another holder's lease runs."""
    with storage_errors(session, f"taking the {name} lease"):
        begin_write(session)
        row = session.scalar(select(Lease).where(Lease.name == name).with_for_update())
        if row is None:
            session.add(Lease(name=name, holder=holder, expires_at=now + ttl))
            try:
                session.commit()
            except IntegrityError:  # another replica inserted it first
                session.rollback()
                return False
            return True
        if row.holder != holder and row.expires_at > now:
            session.rollback()
            return False
        row.holder, row.expires_at = holder, now + ttl
        session.commit()
    return True


def release(session: Session, name: str, holder: str) -> None:
    """Give the lease up (a no-op unless ``holder`` has it)."""
    with storage_errors(session, f"releasing the {name} lease"):
        session.execute(delete(Lease).where(Lease.name == name, Lease.holder == holder))
        session.commit()
