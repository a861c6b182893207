"""Members signed in by the host site: a verified host token becomes a citewall session.

The host signs a short-lived JWT for its logged-in member; ``provision`` verifies it and finds
(or, on first sight, creates) the member keyed by the token's issuer and subject;
``open_session`` issues the opaque bearer session the browser keeps (``storage.sessions``).
Two steps, so the API can apply the member's rate limit before a session row is written.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from citewall.auth.provision import active_user
from citewall.auth.rejection import TokenRejected
from citewall.auth.verifier import JwtVerifier
from citewall.storage.models import User
from citewall.storage.sessions import issue_session

log = logging.getLogger("citewall.auth")


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

    def provision(self, session: Session, host_token: str) -> User:
        """The member ``host_token`` signs in (created on first sight).

        ``TokenRejected`` for a bad token (no user is created) or a disabled member.
        """
        try:
            claims = self.verifier.verify(host_token)
        except TokenRejected as exc:
            log.warning("member sign-in refused: %s: %s", exc.reason, exc.detail)
            raise
        user = active_user(session, claims, "member", "member")
        return user

    def open_session(self, session: Session, user: User) -> IssuedSession:
        """A new session for ``user`` (an active member ``provision`` returned)."""
        expires_at = self.clock() + self.session_ttl
        token = issue_session(session, user, expires_at)
        log.info("member %r signed in (session until %s)", user.name, expires_at.isoformat())
        return IssuedSession(token=token, expires_at=expires_at, user=user)
