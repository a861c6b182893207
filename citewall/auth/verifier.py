"""The JWT rules citewall applies to host tokens and proxy assertions, on top of PyJWT.

Algorithms are pinned by the key source (never ``none``; HS256 for a secret, RS256/ES256 for a
JWKS) and the key found must be bound to the token's ``alg``; ``exp``, ``iat``, ``iss``, ``aud``
and ``sub`` are required; ``exp``/``nbf``/``iat`` are checked with ``leeway_s`` of clock skew;
``exp - iat`` may not exceed ``max_lifetime_s``; a token is at most 8192 characters. A refusal
is a ``TokenRejected`` with its reason; a good token gives typed ``Claims``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jwt
from jwt.exceptions import (
    ExpiredSignatureError,
    ImmatureSignatureError,
    InvalidAlgorithmError,
    InvalidAudienceError,
    InvalidIssuerError,
    InvalidSignatureError,
    MissingRequiredClaimError,
    PyJWTError,
)

from citewall.auth.address import email_domain
from citewall.auth.keys import KeySource
from citewall.auth.rejection import Reason, TokenRejected

#: Longest token accepted, in characters.
MAX_TOKEN_CHARS = 8192
#: Longest issuer and subject kept (the database columns' length).
MAX_ID_CHARS = 255
MAX_EMAIL_CHARS = 320
REQUIRED_CLAIMS = ["exp", "iat", "iss", "aud", "sub"]


@dataclass(frozen=True, slots=True)
class Claims:
    """What citewall uses of a verified token. ``email`` is None when absent, marked
    unverified (``email_verified: false``) or not a well-formed address (``auth.address``);
    ``groups`` holds the groups claim's strings;
    ``token_id`` is the ``jti`` (None when absent or not a non-empty string)."""

    issuer: str
    subject: str
    issued_at: int
    expires_at: int
    email: str | None
    name: str | None
    groups: tuple[str, ...]
    token_id: str | None

    @property
    def readable(self) -> str:
        """The most readable of email, name and subject (a new user's name is made from it)."""
        return self.email or self.name or self.subject


#: PyJWT's errors, most specific first (InvalidSignatureError is a DecodeError).
_REASONS: tuple[tuple[type[PyJWTError], Reason], ...] = (
    (ExpiredSignatureError, "expired"),
    (ImmatureSignatureError, "not_yet_valid"),
    (InvalidAudienceError, "bad_audience"),
    (InvalidIssuerError, "bad_issuer"),
    (MissingRequiredClaimError, "missing_claim"),
    (InvalidSignatureError, "bad_signature"),
    (InvalidAlgorithmError, "bad_algorithm"),
)


def reason_for(exc: PyJWTError) -> Reason:
    """The reason a PyJWT error stands for (``malformed`` for any other)."""
    for cls, reason in _REASONS:
        if isinstance(exc, cls):
            return reason
    return "malformed"


class JwtVerifier:
    """Verifies tokens of one issuer and audience against one key source."""

    def __init__(
        self,
        keys: KeySource,
        *,
        issuer: str,
        audience: str,
        leeway_s: int,
        max_lifetime_s: int,
        groups_claim: str = "groups",
    ) -> None:
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
        self.leeway_s = leeway_s
        self.max_lifetime_s = max_lifetime_s
        self.groups_claim = groups_claim

    def verify(self, token: str) -> Claims:
        """The claims of ``token``; ``TokenRejected`` (with the reason) if it is not good."""
        if len(token) > MAX_TOKEN_CHARS:
            raise TokenRejected("malformed", f"the token has over {MAX_TOKEN_CHARS} characters")
        try:
            header = jwt.get_unverified_header(token)
        except PyJWTError as exc:
            raise TokenRejected("malformed", f"unreadable header: {exc}") from None
        alg = header.get("alg")
        if alg not in self.keys.algorithms:
            raise TokenRejected("bad_algorithm", f"alg {str(alg)[:20]!r} is not accepted")
        kid = header.get("kid")
        key = self.keys.key_for(kid if isinstance(kid, str) else None)
        if key.algorithm_name != alg:
            raise TokenRejected(
                "bad_algorithm", f"alg {alg!r} does not match its key ({key.algorithm_name})"
            )
        try:
            payload = jwt.decode(
                token,
                key,
                algorithms=[alg],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway_s,
                options={"require": REQUIRED_CLAIMS},
            )
        except PyJWTError as exc:
            raise TokenRejected(reason_for(exc), str(exc)) from None
        return self._claims(payload)

    def _claims(self, payload: dict[str, Any]) -> Claims:
        subject, issuer = payload["sub"], payload["iss"]
        if not isinstance(subject, str) or not subject:
            raise TokenRejected("missing_claim", "sub is empty")
        if len(subject) > MAX_ID_CHARS or len(issuer) > MAX_ID_CHARS:
            raise TokenRejected("malformed", f"iss or sub is over {MAX_ID_CHARS} characters")
        issued_at, expires_at = int(payload["iat"]), int(payload["exp"])
        if expires_at - issued_at > self.max_lifetime_s:
            raise TokenRejected(
                "too_long_lived",
                f"exp - iat is {expires_at - issued_at} s; at most {self.max_lifetime_s} s",
            )
        return Claims(
            issuer=issuer,
            subject=subject,
            issued_at=issued_at,
            expires_at=expires_at,
            email=_email(payload),
            name=_text(payload.get("name")),
            groups=_groups(payload.get(self.groups_claim)),
            token_id=_text(payload.get("jti")),
        )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _email(payload: dict[str, Any]) -> str | None:
    email = _text(payload.get("email"))
    if email is None or payload.get("email_verified") is False:
        return None
    if len(email) > MAX_EMAIL_CHARS or email_domain(email) is None:
        return None
    return email


def _groups(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return ()
