"""Why a sign-in token was refused: a short machine reason, logged and counted, never sent.

Every refusal answers the caller the same generic 401 (``TokenRejected``'s message); the reason
goes to the log (logger ``citewall.auth``) and the ``citewall_sign_ins_total`` metric.
"""

from __future__ import annotations

from typing import Literal, get_args

from citewall.errors import AuthError

Reason = Literal[
    "expired",
    "not_yet_valid",
    "bad_audience",
    "bad_issuer",
    "unknown_key",
    "bad_algorithm",
    "bad_signature",
    "malformed",
    "too_long_lived",
    "missing_claim",
    "jwks_unavailable",
    "disabled",
    "replayed",
]
REASONS: tuple[Reason, ...] = get_args(Reason)

#: The one detail every refused token gets (the reason would help an attacker tune a forgery).
GENERIC_DETAIL = "the sign-in token was not accepted"


class TokenRejected(AuthError):
    """A sign-in token (host JWT or proxy assertion) was refused, for ``reason``.

    ``detail`` says more for the log (never the token itself); ``str()`` is the generic detail.
    """

    def __init__(self, reason: Reason, detail: str = "") -> None:
        self.reason: Reason = reason
        self.detail = detail
        super().__init__(GENERIC_DETAIL)
