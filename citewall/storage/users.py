"""Users and their bearer tokens. A token is shown once; only its sha256 digest is stored.

Tokens look like ``cw_`` + 40 URL-safe characters (240 random bits). Authentication hashes the
presented token and looks the digest up through a unique index, so the secret is never compared
character by character against stored data (no timing side channel), and a database dump
reveals no usable token.

Users signed in by a host site or an identity-aware proxy are provisioned on first sight by
``provision_external_user``, keyed by their token's issuer and subject; their sessions are
tokens with an expiry (``storage.sessions``).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from citewall.errors import NotFoundError, UserError
from citewall.kb.audiences import Viewer, audience_names
from citewall.storage.db import begin_write
from citewall.storage.failures import storage_errors
from citewall.storage.models import ROLES, ApiToken, Role, User
from citewall.storage.types import utcnow

TOKEN_PREFIX = "cw_"
#: 30 random bytes -> exactly 40 URL-safe base64 characters.
_TOKEN_BYTES = 30
#: Characters of the token kept in clear for display and revocation (``cw_`` + 5).
DISPLAY_PREFIX_LENGTH = 8
#: last_used_at is only rewritten when older than this: no write per request.
LAST_USED_RESOLUTION = timedelta(seconds=60)

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$")
_TOKEN_RE = re.compile(r"^cw_[A-Za-z0-9_-]{40}$")
_NAME_CHAR_RE = re.compile(r"[^A-Za-z0-9._@-]+")
#: Hex digits of sha256(issuer, subject) an external user's name ends with: a clash with a
#: taken name retries with the next, longer suffix.
_NAME_HASH_LENGTHS = (6, 12, 24, 64)


def hash_token(token: str) -> str:
    """The sha256 hex digest under which a token is stored."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A fresh random token (``cw_`` + 40 URL-safe characters)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(_TOKEN_BYTES)


def check_role(role: str) -> str:
    """Return ``role`` if it is one citewall knows; ``UserError`` naming the allowed ones."""
    if role not in ROLES:
        raise UserError(f"unknown role {role!r}; allowed roles: {', '.join(ROLES)}")
    return role


def check_name(name: str) -> str:
    """Return ``name`` if usable as a user name; ``UserError`` naming the bad value otherwise."""
    if not _NAME_RE.fullmatch(name):
        raise UserError(
            f"invalid user name {name!r}: use 1-100 letters, digits, '.', '_', '@' or '-', "
            "starting with a letter or digit"
        )
    return name


def _add_token_row(session: Session, user: User) -> str:
    token = new_token()
    session.add(
        ApiToken(
            user_id=user.id, token_hash=hash_token(token), prefix=token[:DISPLAY_PREFIX_LENGTH]
        )
    )
    return token


def check_groups(groups: object) -> list[str]:
    """Group names (``kb.audiences``), sorted and without duplicates; ``UserError`` naming a
    bad one.

    >>> check_groups(["partners", "enterprise"])
    ['enterprise', 'partners']
    """
    try:
        return list(audience_names(groups))
    except ValueError as exc:
        raise UserError(f"bad group: {exc}") from None


def viewer_of(user: User) -> Viewer:
    """Who ``user`` retrieves as: an admin sees every card; a member the cards their groups
    allow (``kb.audiences.retrievable_for``)."""
    if user.role == "admin":
        return Viewer.staff()
    return Viewer.member(user.groups or ())


def create_user(
    session: Session, name: str, role: str = "member", groups: Sequence[str] = ()
) -> tuple[User, str]:
    """Create a user with one token; return the user and the plain token (shown only now).

    ``UserError`` for an unknown role (naming the allowed roles), a malformed name, a name
    that is taken or a bad group name.
    """
    check_role(role)
    check_name(name)
    names = check_groups(list(groups))
    with storage_errors(session, f"creating user {name!r}"):
        if session.scalar(select(User.id).where(User.name == name)) is not None:
            raise UserError(f"user {name!r} already exists")
        user = User(name=name, role=role, groups=names)
        session.add(user)
        try:
            session.flush()
        except IntegrityError:  # lost a race with a concurrent create of the same name
            session.rollback()
            raise UserError(f"user {name!r} already exists") from None
        token = _add_token_row(session, user)
        session.commit()
    return user, token


def get_user(session: Session, name: str) -> User:
    """The user called ``name``; ``NotFoundError`` if there is none."""
    with storage_errors(session, f"reading user {name!r}"):
        user = session.scalar(select(User).where(User.name == name))
    if user is None:
        raise NotFoundError(f"no user named {name!r}")
    return user


def user_name(session: Session, user_id: int) -> str:
    """The name of the user with id ``user_id``; ``NotFoundError`` if there is none."""
    with storage_errors(session, "reading a user"):
        user = session.get(User, user_id)
    if user is None:
        raise NotFoundError(f"no user with id {user_id}")
    return user.name


def add_token(session: Session, user: User) -> str:
    """Issue another token for an active user and return it (shown only now)."""
    if user.disabled_at is not None:
        raise UserError(f"user {user.name!r} is disabled; its tokens cannot be renewed")
    with storage_errors(session, f"adding a token for {user.name!r}"):
        token = _add_token_row(session, user)
        session.commit()
    return token


def token_active(token: ApiToken, now: datetime) -> bool:
    """Whether ``token`` still authenticates at ``now``: not revoked, and not an ended session."""
    return token.revoked_at is None and (token.expires_at is None or token.expires_at > now)


def authenticate(session: Session, token: str, now: datetime | None = None) -> User | None:
    """The active user owning ``token``, or None (malformed, unknown, revoked, expired or
    disabled). ``now`` defaults to the current UTC time.

    The lookup is by sha256 digest through a unique index; ``hmac.compare_digest`` confirms
    the match. ``last_used_at`` is written at most once per minute per token.
    """
    if not isinstance(token, str) or not _TOKEN_RE.fullmatch(token):
        return None
    now = now or utcnow()
    digest = hash_token(token)
    with storage_errors(session, "checking a token"):
        row = session.execute(
            select(ApiToken, User)
            .join(User, ApiToken.user_id == User.id)
            .where(ApiToken.token_hash == digest)
        ).first()
        if row is None:
            return None
        api_token, user = row.tuple()
        if not hmac.compare_digest(api_token.token_hash, digest):
            return None
        if not token_active(api_token, now) or user.disabled_at is not None:
            return None
        if api_token.last_used_at is None or now - api_token.last_used_at > LAST_USED_RESOLUTION:
            session.execute(
                update(ApiToken).where(ApiToken.id == api_token.id).values(last_used_at=now)
            )
            session.commit()
    return user


def external_user_name(readable: str, issuer: str, subject: str, hash_length: int = 6) -> str:
    """The user name of an external user: ``readable`` (their email, name claim or subject)
    made to fit the name rule, ``-`` and the first ``hash_length`` hex digits of
    sha256(issuer, newline, subject), so two issuers' "alice" never share a name.

    >>> external_user_name("Alice Smith <alice@example.com>", "https://host", "42")
    'Alice-Smith-alice@example.com-dfe82e'
    >>> external_user_name("", "https://host", "42")
    'user-dfe82e'
    """
    digest = hashlib.sha256(f"{issuer}\n{subject}".encode()).hexdigest()[:hash_length]
    base = _NAME_CHAR_RE.sub("-", readable).strip("-._@")
    base = base[: 100 - 1 - hash_length].rstrip("-._@") or "user"
    return check_name(f"{base}-{digest}")


def _external_user(session: Session, issuer: str, subject: str) -> User | None:
    return session.scalar(select(User).where(User.issuer == issuer, User.subject == subject))


def provision_external_user(
    session: Session,
    *,
    issuer: str,
    subject: str,
    readable: str,
    email: str | None,
    role: Role,
    groups: Sequence[str] | None = None,
) -> User:
    """The user keyed by (``issuer``, ``subject``), created with ``role`` on first sight.

    Race-safe: two first sign-ins at once both end with the one row the unique index lets in.
    An existing user keeps its name and role; its ``email`` follows the latest token, and so
    do its ``groups`` when given (a member's groups are read at every sign-in).
    """
    check_role(role)
    names = None if groups is None else check_groups(list(groups))
    with storage_errors(session, "provisioning a signed-in user"):
        for hash_length in _NAME_HASH_LENGTHS:
            # SQLite: take the write lock before reading, or a reader upgrading to a writer
            # after a concurrent first sign-in committed fails at once ("database is locked").
            begin_write(session)
            user = _external_user(session, issuer, subject)
            if user is not None:
                changed = False
                if email is not None and user.email != email:
                    user.email, changed = email, True
                if names is not None and list(user.groups or []) != names:
                    user.groups, changed = names, True
                if changed:
                    session.commit()
                return user
            name = external_user_name(readable, issuer, subject, hash_length)
            if session.scalar(select(User.id).where(User.name == name)) is not None:
                continue  # the name is taken (another issuer's user): a longer suffix
            user = User(
                name=name,
                role=role,
                issuer=issuer,
                subject=subject,
                email=email,
                groups=names or [],
            )
            session.add(user)
            try:
                session.commit()
            except IntegrityError:  # lost a race: the same (issuer, subject), or the name
                session.rollback()
                continue
            return user
        user = _external_user(session, issuer, subject)
    if user is None:
        raise UserError(f"no free user name for subject {subject!r} of issuer {issuer!r}")
    return user


def set_groups(session: Session, name: str, groups: Sequence[str]) -> User:
    """Replace the groups of the user called ``name`` (none: every unrestricted card only)."""
    names = check_groups(list(groups))
    user = get_user(session, name)
    with storage_errors(session, f"setting the groups of {name!r}"):
        user.groups = names
        session.commit()
    return user


def audience_members(session: Session, audience: str) -> list[int]:
    """The ids of the members whose groups (now) include ``audience``: whose activity the
    reports ``?audience=`` narrows to. Groups are a JSON list, read here rather than matched in
    SQL, the same way on SQLite and PostgreSQL."""
    rows = session.execute(select(User.id, User.groups).where(User.role == "member"))
    return [int(uid) for uid, groups in rows if audience in (groups or ())]


def list_users(session: Session) -> list[User]:
    """Every user by name, with ``tokens`` loaded (for counts and last use)."""
    with storage_errors(session, "listing users"):
        return list(
            session.scalars(select(User).options(selectinload(User.tokens)).order_by(User.name))
        )


def revoke_user(session: Session, name: str) -> User:
    """Disable a user and revoke all their tokens; their history stays. Idempotent."""
    user = get_user(session, name)
    now = utcnow()
    with storage_errors(session, f"revoking user {name!r}"):
        if user.disabled_at is None:
            user.disabled_at = now
        session.execute(
            update(ApiToken)
            .where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
            .values(revoked_at=now)
        )
        session.commit()
    return user


def revoke_token(session: Session, prefix: str) -> ApiToken:
    """Revoke the one active token whose display prefix is ``prefix``.

    ``NotFoundError`` if none matches; ``UserError`` if several do (revoke the user instead).
    """
    with storage_errors(session, f"revoking token {prefix!r}"):
        matches = list(
            session.scalars(
                select(ApiToken).where(ApiToken.prefix == prefix, ApiToken.revoked_at.is_(None))
            )
        )
        if not matches:
            raise NotFoundError(f"no active token with prefix {prefix!r}")
        if len(matches) > 1:
            raise UserError(
                f"{len(matches)} active tokens share prefix {prefix!r}; revoke the user instead"
            )
        token = matches[0]
        token.revoked_at = utcnow()
        session.commit()
    return token
