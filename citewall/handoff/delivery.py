"""Delivering stored handoffs: one pass (``deliver_due``) and the schedule of retries.

A pass takes the lease on the pending handoffs that are due (``storage.handoffs.claim_due``),
POSTs each one's stored payload, signed, and records the attempt: a 2xx delivers it; no answer
(the receiver is down, a timeout), a 5xx, a 408 or a 429 schedules the next attempt with
exponential backoff until ``CITEWALL_HANDOFF_RETRY_HOURS`` after the request; any other answer
(a 3xx or 4xx: the receiver refuses it as sent) fails it at once. Whatever fails shows in the
admin list, with every attempt.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
from sqlalchemy.orm import Session, sessionmaker

from citewall.config import Settings
from citewall.handoff.signature import ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signature
from citewall.storage import handoffs
from citewall.storage.models import Handoff

log = logging.getLogger(__name__)

#: The wait after the first failed attempt; each later one doubles it, up to ``MAX_DELAY``.
FIRST_DELAY = timedelta(seconds=30)
MAX_DELAY = timedelta(hours=1)
#: How many handoffs one pass takes at most.
PASS_LIMIT = 20
#: Longest error text kept per attempt.
ERROR_CHARS = 300


def retry_delay(attempts: int) -> timedelta:
    """How long to wait after the ``attempts``-th failed attempt: 30 s, 1 min, 2 min, ...
    at most an hour.

    >>> [int(retry_delay(n).total_seconds()) for n in (1, 2, 3, 10)]
    [30, 60, 120, 3600]
    """
    delay: timedelta = FIRST_DELAY * (2 ** max(0, min(attempts, 20) - 1))
    return min(delay, MAX_DELAY)


def next_attempt(
    created_at: datetime, attempts: int, now: datetime, retry_for: timedelta
) -> datetime | None:
    """When to try again after the ``attempts``-th attempt failed at ``now``, or ``None`` when
    the retry time (``retry_for`` from ``created_at``) is over. The last attempt falls on the
    deadline itself."""
    deadline = created_at + retry_for
    if now >= deadline:
        return None
    return min(now + retry_delay(attempts), deadline)


def retryable(status_code: int) -> bool:
    """Whether an answer means "try again later": a 5xx, 408 or 429.

    >>> [retryable(c) for c in (500, 503, 429, 408, 400, 404, 301)]
    [True, True, True, True, False, False, False]
    """
    return status_code >= 500 or status_code in {408, 429}


#: Why a handoff whose payload was removed (retention, erasure) is not delivered.
REMOVED_BEFORE_DELIVERY = "its conversation's words were removed (retention or erasure) first"


def payload_bytes(payload: dict[str, Any]) -> bytes:
    """The body sent for a stored payload: compact JSON, keys sorted (the same bytes on every
    attempt, whatever order the database gives the keys back in)."""
    return json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()


@dataclass(slots=True)
class PassReport:
    """What one delivery pass did."""

    delivered: int = 0
    retrying: int = 0
    failed: int = 0
    #: Attempts whose lease ran out before they were recorded (another replica owns the row).
    lost: int = 0


@dataclass(frozen=True, slots=True)
class Webhook:
    """Where and how to deliver: the URL, the signing secret, the per-attempt timeout."""

    url: str
    secret: str
    timeout_s: float
    retry_for: timedelta

    @classmethod
    def from_settings(cls, settings: Settings) -> Webhook | None:
        """The configured webhook, or None when handoff is off."""
        if not settings.handoff_webhook_url or settings.handoff_webhook_secret is None:
            return None
        return cls(
            url=settings.handoff_webhook_url,
            secret=settings.handoff_webhook_secret.get_secret_value(),
            timeout_s=settings.handoff_timeout_s,
            retry_for=timedelta(hours=settings.handoff_retry_hours),
        )

    @property
    def lease(self) -> timedelta:
        """How long a claim holds: well past one attempt's timeout."""
        return timedelta(seconds=self.timeout_s * 3 + 30)


def _post(
    client: httpx.Client, webhook: Webhook, payload: dict[str, Any], handoff_id: str, now: datetime
) -> httpx.Response:
    body = payload_bytes(payload)
    stamp = int(now.timestamp())
    return client.post(
        webhook.url,
        content=body,
        headers={
            "Content-Type": "application/json",
            TIMESTAMP_HEADER: str(stamp),
            SIGNATURE_HEADER: signature(webhook.secret, stamp, body),
            ID_HEADER: handoff_id,
        },
        timeout=webhook.timeout_s,
    )


def deliver_one(
    session: Session,
    client: httpx.Client,
    webhook: Webhook,
    handoff: Handoff,
    *,
    owner: str,
    clock: Callable[[], datetime],
    report: PassReport,
) -> None:
    """Attempt one claimed handoff and record the attempt. A handoff whose payload retention or
    an erasure removed before it could be delivered fails without a request."""
    started = clock()
    status_code: int | None = None
    error: str | None = None
    timer = time.perf_counter()
    if handoff.payload is None:
        error = REMOVED_BEFORE_DELIVERY
    else:
        try:
            response = _post(client, webhook, handoff.payload, handoff.id, started)
            status_code = response.status_code
            if not 200 <= status_code < 300:
                error = f"HTTP {status_code}: {response.text[:ERROR_CHARS]}"
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"[:ERROR_CHARS]
    duration_ms = (time.perf_counter() - timer) * 1000
    now = clock()
    retry: datetime | None = None
    if status_code is not None and 200 <= status_code < 300:
        outcome: handoffs.Outcome = "delivered"
    elif handoff.payload is None:
        outcome = "failed"
    elif status_code is None or retryable(status_code):
        retry = next_attempt(handoff.created_at, handoff.attempts + 1, now, webhook.retry_for)
        outcome = "retry" if retry is not None else "failed"
    else:
        outcome = "failed"
    recorded = handoffs.record_attempt(
        session,
        handoff,
        owner=owner,
        now=now,
        outcome=outcome,
        status_code=status_code,
        error=error,
        duration_ms=duration_ms,
        next_attempt_at=retry,
    )
    if not recorded:
        report.lost += 1
        log.warning("handoff %s: the lease ran out during the attempt", handoff.id)
    elif outcome == "delivered":
        report.delivered += 1
    elif outcome == "retry":
        report.retrying += 1
    else:
        report.failed += 1
        log.warning("handoff %s failed for good: %s", handoff.id, error)


def deliver_due(
    session_factory: sessionmaker[Session],
    webhook: Webhook,
    *,
    owner: str,
    clock: Callable[[], datetime],
    client: httpx.Client | None = None,
    limit: int = PASS_LIMIT,
) -> PassReport:
    """One delivery pass: claim the due handoffs and attempt each once."""
    report = PassReport()
    with session_factory() as session:
        claimed = handoffs.claim_due(
            session, owner=owner, now=clock(), lease=webhook.lease, limit=limit
        )
        if not claimed:
            return report
        own_client = client is None
        http = client or httpx.Client(follow_redirects=False)
        try:
            for handoff in claimed:
                deliver_one(
                    session, http, webhook, handoff, owner=owner, clock=clock, report=report
                )
        finally:
            if own_client:
                http.close()
    return report
