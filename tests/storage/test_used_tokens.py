"""Host tokens already exchanged: a key is used once; the mark is part of the caller's
transaction (rolled back, the token is unused again); each use purges a bounded batch of
expired rows and keeps live ones. SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from citewall.storage.models import UsedHostToken
from citewall.storage.types import utcnow
from citewall.storage.used_tokens import PURGE_BATCH, host_token_used, use_host_token


def key(n: int) -> str:
    return f"{n:064x}"


def rows(session: Session) -> int:
    return int(session.scalar(select(func.count()).select_from(UsedHostToken)) or 0)


def test_a_key_is_used_once(session: Session) -> None:
    now = utcnow()
    assert not host_token_used(session, key(1))
    assert use_host_token(session, key(1), now + timedelta(minutes=5), now)
    session.commit()
    assert host_token_used(session, key(1))
    assert not use_host_token(session, key(1), now + timedelta(minutes=5), now)
    assert use_host_token(session, key(2), now + timedelta(minutes=5), now)
    session.commit()
    assert rows(session) == 2


def test_a_rolled_back_use_leaves_the_token_unused(session: Session) -> None:
    now = utcnow()
    assert use_host_token(session, key(3), now + timedelta(minutes=5), now)
    session.rollback()  # what the sign-in does when writing its session fails
    assert not host_token_used(session, key(3))
    assert use_host_token(session, key(3), now + timedelta(minutes=5), now)
    session.commit()


def test_each_use_purges_a_bounded_batch_of_expired_rows(session: Session) -> None:
    now = utcnow()
    expired = PURGE_BATCH + 20
    session.add_all(
        UsedHostToken(token_key=key(100 + n), expires_at=now - timedelta(seconds=n + 1))
        for n in range(expired)
    )
    session.add(UsedHostToken(token_key=key(9), expires_at=now + timedelta(seconds=1)))
    session.commit()
    assert use_host_token(session, key(10), now + timedelta(minutes=5), now)
    session.commit()
    assert rows(session) == expired - PURGE_BATCH + 2  # the live one and the new one stay
    assert use_host_token(session, key(11), now + timedelta(minutes=5), now)
    session.commit()
    assert rows(session) == 3
    assert host_token_used(session, key(9))
