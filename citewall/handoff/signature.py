"""Signing a delivery so the helpdesk can check it came from citewall, and is not a replay.

The signed text is the timestamp header's value, a dot, then the raw body bytes
(``b"1767225600." + body``); ``X-Citewall-Signature`` is ``sha256=`` and the hex HMAC-SHA256 of
it under ``CITEWALL_HANDOFF_WEBHOOK_SECRET``. A receiver recomputes it, compares in constant
time, and refuses a timestamp outside its window (``verify_signature``): changing the
timestamp breaks the signature, so an old delivery cannot be replayed as new.
"""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-Citewall-Signature"
TIMESTAMP_HEADER = "X-Citewall-Timestamp"
#: The handoff's id on every attempt: a receiver that saw it already can answer 2xx and drop it.
ID_HEADER = "X-Citewall-Handoff-Id"
#: How far a receiver's clock may be from the timestamp, by default (seconds).
DEFAULT_TOLERANCE_S = 300


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The ``X-Citewall-Signature`` value of ``body`` sent at ``timestamp`` (Unix seconds).

    >>> signature("s3cret", 1767225600, b'{}')[:13]
    'sha256=29ee05'
    """
    signed = str(timestamp).encode("ascii") + b"." + body
    digest = hmac.new(secret.encode("utf-8"), signed, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def verify_signature(
    secret: str,
    *,
    timestamp: str,
    body: bytes,
    signature_header: str,
    now: float,
    tolerance_s: float = DEFAULT_TOLERANCE_S,
) -> bool:
    """Whether a received delivery is citewall's and fresh: the timestamp is an integer within
    ``tolerance_s`` of ``now`` and the signature matches (compared in constant time)."""
    if not timestamp.isdigit() or len(timestamp) > 12:
        return False
    sent = int(timestamp)
    if abs(now - sent) > tolerance_s:
        return False
    return hmac.compare_digest(signature(secret, sent, body), signature_header)
