"""External users and sessions: provisioned once per (issuer, subject), race-safe; sessions
end at their expiry, on sign-out and with their user; API tokens are not sessions."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from citewall.errors import UserError
from citewall.storage.models import User
from citewall.storage.sessions import issue_session, revoke_session
from citewall.storage.types import utcnow
from citewall.storage.users import (
    authenticate,
    create_user,
    external_user_name,
    provision_external_user,
    revoke_user,
)

ISSUER = "https://host.test"


def provision(session: Session, subject: str, readable: str = "pat@host.test") -> User:
    return provision_external_user(
        session, issuer=ISSUER, subject=subject, readable=readable, email=None, role="member"
    )


def test_the_same_issuer_and_subject_is_one_user(session: Session) -> None:
    first = provision(session, "42")
    again = provision(session, "42", readable="a new display name")
    assert again.id == first.id and again.name == first.name
    assert first.name == external_user_name("pat@host.test", ISSUER, "42")
    other_issuer = provision_external_user(
        session,
        issuer="https://other.test",
        subject="42",
        readable="pat@host.test",
        email=None,
        role="member",
    )
    assert other_issuer.id != first.id and other_issuer.name != first.name
    assert session.scalar(select(func.count()).select_from(User)) == 2


def test_a_taken_name_gets_a_longer_suffix(session: Session) -> None:
    create_user(session, external_user_name("pat", ISSUER, "7"), "member")
    user = provision(session, "7", readable="pat")
    assert user.name == external_user_name("pat", ISSUER, "7", hash_length=12)


def test_email_follows_the_latest_token(session: Session) -> None:
    provision_external_user(
        session, issuer=ISSUER, subject="9", readable="x", email="old@host.test", role="member"
    )
    user = provision_external_user(
        session, issuer=ISSUER, subject="9", readable="x", email="new@host.test", role="member"
    )
    assert user.email == "new@host.test"


def test_concurrent_first_sign_ins_make_one_user(sessions: sessionmaker[Session]) -> None:
    barrier = threading.Barrier(6)
    ids: list[int] = []
    errors: list[BaseException] = []

    def sign_in() -> None:
        try:
            with sessions() as s:
                barrier.wait(timeout=10)
                ids.append(provision(s, "race").id)
        except BaseException as exc:  # reported below, with the thread's error
            errors.append(exc)

    threads = [threading.Thread(target=sign_in) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors and len(ids) == 6 and len(set(ids)) == 1
    with sessions() as s:
        count = s.scalar(select(func.count()).select_from(User).where(User.subject == "race"))
    assert count == 1


def test_a_session_ends_at_its_expiry(session: Session) -> None:
    user = provision(session, "1")
    now = utcnow()
    token = issue_session(session, user, now + timedelta(minutes=5))
    assert authenticate(session, token, now=now) is not None
    assert authenticate(session, token, now=now + timedelta(minutes=4, seconds=59)) is not None
    assert authenticate(session, token, now=now + timedelta(minutes=5)) is None


def test_sign_out_revokes_only_a_session(session: Session) -> None:
    user = provision(session, "2")
    now = utcnow()
    token = issue_session(session, user, now + timedelta(hours=1))
    other = issue_session(session, user, now + timedelta(hours=1))
    _, api_token = create_user(session, "cli-user", "member")
    assert revoke_session(session, api_token, now) == "not_a_session"
    assert authenticate(session, api_token, now=now) is not None
    assert revoke_session(session, token, now) == "revoked"
    assert authenticate(session, token, now=now) is None
    assert authenticate(session, other, now=now) is not None  # another tab's session stays
    assert revoke_session(session, token, now) == "unknown"
    assert revoke_session(session, "cw_" + "a" * 40, now) == "unknown"
    ended = issue_session(session, user, now - timedelta(seconds=1))
    assert revoke_session(session, ended, now) == "unknown"


def test_revoking_the_user_ends_their_sessions_and_refuses_new_ones(session: Session) -> None:
    user = provision(session, "3")
    token = issue_session(session, user, utcnow() + timedelta(hours=1))
    revoke_user(session, user.name)
    assert authenticate(session, token) is None
    with pytest.raises(UserError, match="disabled"):
        issue_session(session, user, utcnow() + timedelta(hours=1))
