"""Users and tokens: only the sha256 digest is stored; revoked/disabled tokens stop working."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

import pytest
from sqlalchemy import select, text, update
from sqlalchemy.orm import Session

from citewall.errors import NotFoundError, UserError
from citewall.storage.models import ApiToken, User
from citewall.storage.schema import Database
from citewall.storage.users import (
    add_token,
    authenticate,
    create_user,
    get_user,
    list_users,
    revoke_token,
    revoke_user,
)


def _all_stored_text(db: Database) -> str:
    """Every value of every row of every table, as one string."""
    chunks = []
    with db.engine.connect() as conn:
        for table in ("users", "api_tokens", "conversations", "messages", "cards"):
            for row in conn.execute(text(f"SELECT * FROM {table}")):
                chunks.append(" ".join(str(v) for v in row))
    return "\n".join(chunks)


def test_create_user_returns_a_token_that_authenticates(session: Session) -> None:
    user, token = create_user(session, "alice", "member")
    assert re.fullmatch(r"cw_[A-Za-z0-9_-]{40}", token)
    assert user.id is not None and user.role == "member" and user.disabled_at is None
    found = authenticate(session, token)
    assert found is not None and found.id == user.id and found.name == "alice"


def test_only_the_hash_is_stored(db: Database, session: Session) -> None:
    _, token = create_user(session, "alice", "admin")
    second = add_token(session, get_user(session, "alice"))
    stored = _all_stored_text(db)
    for plain in (token, second):
        assert plain not in stored
        assert plain[8:] not in stored  # not even the secret part without the prefix
        assert hashlib.sha256(plain.encode()).hexdigest() in stored
    rows = session.scalars(select(ApiToken).order_by(ApiToken.id)).all()
    assert [r.prefix for r in rows] == [token[:8], second[:8]]
    assert all(len(r.token_hash) == 64 for r in rows)


@pytest.mark.parametrize("role", ["root", "Admin", "", "members"])
def test_unknown_role_names_the_allowed_roles(session: Session, role: str) -> None:
    with pytest.raises(UserError, match=r"allowed roles: member, admin") as info:
        create_user(session, "bob", role)
    assert repr(role) in str(info.value)
    assert session.scalar(select(User).where(User.name == "bob")) is None


def test_duplicate_name_is_a_user_error(session: Session) -> None:
    create_user(session, "alice", "member")
    with pytest.raises(UserError, match="'alice' already exists"):
        create_user(session, "alice", "admin")
    assert len(list_users(session)) == 1


@pytest.mark.parametrize("name", ["", " bob", "bob smith", "-bob", "x" * 101, "bob\n"])
def test_bad_names_are_refused(session: Session, name: str) -> None:
    with pytest.raises(UserError, match="invalid user name"):
        create_user(session, name, "member")


@pytest.mark.parametrize(
    "token",
    ["", "cw_", "cw_" + "a" * 39, "cw_" + "a" * 41, "xx_" + "a" * 40, "cw_" + "!" * 40],
)
def test_malformed_or_unknown_tokens_do_not_authenticate(session: Session, token: str) -> None:
    create_user(session, "alice", "member")
    assert authenticate(session, token) is None
    assert authenticate(session, "cw_" + "a" * 40) is None  # well-formed but unknown


def test_revoked_user_and_revoked_token_no_longer_authenticate(session: Session) -> None:
    _alice, alice_token = create_user(session, "alice", "member")
    bob, bob_token = create_user(session, "bob", "member")
    bob_second = add_token(session, bob)

    revoke_user(session, "alice")
    assert authenticate(session, alice_token) is None
    assert get_user(session, "alice").disabled_at is not None
    with pytest.raises(UserError, match="disabled"):
        add_token(session, get_user(session, "alice"))

    revoked = revoke_token(session, bob_token[:8])
    assert revoked.revoked_at is not None
    assert authenticate(session, bob_token) is None
    assert authenticate(session, bob_second) is not None  # the other token still works

    with pytest.raises(NotFoundError, match="no active token"):
        revoke_token(session, bob_token[:8])
    with pytest.raises(NotFoundError, match="'nobody'"):
        revoke_user(session, "nobody")


def test_last_used_is_recorded_but_not_rewritten_every_request(session: Session) -> None:
    _, token = create_user(session, "alice", "member")
    assert authenticate(session, token) is not None
    first = session.scalar(select(ApiToken.last_used_at))
    assert first is not None and first.tzinfo is not None
    assert authenticate(session, token) is not None
    session.expire_all()
    assert session.scalar(select(ApiToken.last_used_at)) == first
    # An hour later the timestamp moves.
    session.execute(update(ApiToken).values(last_used_at=first - timedelta(hours=1)))
    session.commit()
    assert authenticate(session, token) is not None
    session.expire_all()
    assert session.scalar(select(ApiToken.last_used_at)) > first - timedelta(minutes=1)


def test_list_users_loads_tokens(session: Session) -> None:
    create_user(session, "bob", "member")
    alice, _ = create_user(session, "alice", "admin")
    add_token(session, alice)
    listed = list_users(session)
    assert [u.name for u in listed] == ["alice", "bob"]
    assert [len(u.tokens) for u in listed] == [2, 1]
