"""Admins behind an identity-aware proxy: the proxy's signed assertion makes the admin.

The proxy (Cloudflare Access, or an oauth2-proxy-style proxy passing an OIDC ID token) signs
an assertion for every request it lets through, in a header. A verified assertion whose
``email`` is a well-formed address at exactly an allowlisted domain (``auth.address``: one
``@``, no display name, no quotes), or whose groups claim holds an allowlisted group, is an
admin, provisioned on first sight keyed by issuer and subject. Any other verified identity
gets 403, even one provisioned before (it no longer qualifies).
"""

from __future__ import annotations

import logging

from sqlalchemy.orm import Session

from citewall.auth.address import email_domain
from citewall.auth.provision import active_user
from citewall.auth.rejection import TokenRejected
from citewall.auth.verifier import Claims, JwtVerifier
from citewall.errors import PermissionDeniedError
from citewall.storage.models import User

log = logging.getLogger("citewall.auth")

#: Longest-lived assertion accepted: Cloudflare Access's longest session (one month).
MAX_ASSERTION_LIFETIME_S = 31 * 86400


def assertion_token(header_value: str) -> str:
    """The JWT in the proxy's header, which holds it bare or as ``Bearer <JWT>``.

    >>> assertion_token("Bearer abc.def.ghi")
    'abc.def.ghi'
    """
    value = header_value.strip()
    scheme, _, rest = value.partition(" ")
    return rest.strip() if scheme.lower() == "bearer" else value


class AdminProxy:
    """Turns the proxy's assertion header into an admin user."""

    def __init__(
        self,
        verifier: JwtVerifier,
        *,
        header: str,
        email_domains: list[str],
        groups: list[str],
    ) -> None:
        self.verifier = verifier
        self.header = header
        self.email_domains = frozenset(email_domains)
        self.groups = frozenset(groups)

    def qualifies(self, claims: Claims) -> bool:
        """Whether the identity is an admin: a well-formed email at exactly an allowlisted
        domain (compared in lower case), or an allowlisted group."""
        domain = email_domain(claims.email) if claims.email else None
        return domain in self.email_domains or not self.groups.isdisjoint(claims.groups)

    def admin(self, session: Session, header_value: str) -> User:
        """The admin the assertion in ``header_value`` names.

        ``TokenRejected`` for a bad assertion (no user is created) or a disabled admin;
        ``PermissionDeniedError`` for a verified identity that is not an admin here.
        """
        try:
            claims = self.verifier.verify(assertion_token(header_value))
        except TokenRejected as exc:
            log.warning("admin proxy sign-in refused: %s: %s", exc.reason, exc.detail)
            raise
        if not self.qualifies(claims):
            log.warning(
                "admin proxy sign-in refused: not_allowed: subject %r has no allowlisted "
                "email domain or group",
                claims.subject[:64],
            )
            raise PermissionDeniedError("your identity is not allowed the admin role here")
        user = active_user(session, claims, "admin", "admin proxy")
        if user.role != "admin":  # the proxy's issuer also signs members in: keep them apart
            raise PermissionDeniedError("your identity is a member here, not an admin")
        return user
