"""Members signed in by the host site: a verified host token becomes a citewall session.

The host signs a short-lived JWT for its logged-in member; ``provision`` verifies it, refuses a
token already exchanged (``replayed``: a host token signs in once, ``auth.replay``) and finds
(or, on first sight, creates) the member keyed by the token's issuer and subject;
``open_session`` marks the token used and issues the opaque bearer session the browser keeps
(``storage.sessions``), in one transaction. Two steps, so the API can apply the member's rate
limit before a session row is written.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session

from citewall.auth.provision import active_user, member_groups
from citewall.auth.rejection import TokenRejected
from citewall.auth.replay import replay_key
from citewall.auth.verifier import JwtVerifier
from citewall.storage.models import User
from citewall.storage.sessions import issue_session
from citewall.storage.used_tokens import host_token_used, use_host_token

log = logging.getLogger("citewall.auth")

REPLAYED = "the host token was already exchanged for a session"


@dataclass(frozen=True, slots=True)
class HostSignIn:
    """A verified, unused host token's member, the key the token is remembered by once used,
    and until when it must be remembered (its ``exp`` plus the leeway: it verifies until then)."""

    user: User
    token_key: str
    usable_until: datetime


@dataclass(frozen=True, slots=True)
class IssuedSession:
    """A new session: its token (shown once), when it ends, and whose it is."""

    token: str
    expires_at: datetime
    user: User


class MemberSignIn:
    """Host token -> member -> session, with ``session_ttl_s`` of life on ``clock``."""

    def __init__(
        self, verifier: JwtVerifier, *, session_ttl_s: int, clock: Callable[[], datetime]
    ) -> None:
        self.verifier = verifier
        self.session_ttl = timedelta(seconds=session_ttl_s)
        self.clock = clock

    def provision(self, session: Session, host_token: str) -> HostSignIn:
        """The member ``host_token`` signs in (created on first sight).

        ``TokenRejected`` for a bad or already exchanged token (no user is created) or a
        disabled member.
        """
        try:
            claims = self.verifier.verify(host_token)
            key = replay_key(claims.issuer, claims.token_id, host_token)
            if host_token_used(session, key):
                raise TokenRejected("replayed", REPLAYED)
        except TokenRejected as exc:
            log.warning("member sign-in refused: %s: %s", exc.reason, exc.detail)
            raise
        user = active_user(session, claims, "member", "member", groups=member_groups(claims.groups))
        until = datetime.fromtimestamp(claims.expires_at + self.verifier.leeway_s, UTC)
        return HostSignIn(user=user, token_key=key, usable_until=until)

    def open_session(self, session: Session, signed: HostSignIn) -> IssuedSession:
        """A new session for the member ``provision`` returned; the host token is used up with
        it. ``TokenRejected`` (``replayed``) when a parallel sign-in used the token first."""
        now = self.clock()
        if not use_host_token(session, signed.token_key, signed.usable_until, now):
            log.warning("member sign-in refused: replayed: %s (in parallel)", REPLAYED)
            raise TokenRejected("replayed", REPLAYED)
        user = signed.user
        expires_at = now + self.session_ttl
        token = issue_session(session, user, expires_at)  # commits the used token with it
        log.info("member %r signed in (session until %s)", user.name, expires_at.isoformat())
        return IssuedSession(token=token, expires_at=expires_at, user=user)
