"""Retention runs: the policy the settings ask for, one run under the lease (so one replica
runs at a time), and the schedule ``citewall serve`` keeps (docs/privacy.md).

    report = run_once(sessions, settings, holder="cli")   # None: another replica is running

A run also carries out erasures recorded and left unfinished (a process stopped mid-way).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy.orm import Session, sessionmaker

from citewall.chat.smalltalk import SMALL_TALK_REPLIES
from citewall.config import Settings
from citewall.errors import CitewallError
from citewall.storage import leases
from citewall.storage.audit import Via
from citewall.storage.erasure import resume_erasures
from citewall.storage.retention import LEASE, RetentionPolicy, RetentionReport, run_retention
from citewall.storage.types import utcnow

logger = logging.getLogger(__name__)

#: How long a runner holds the lease without renewing it (it renews before every batch).
LEASE_TTL = timedelta(minutes=10)


def retention_policy(settings: Settings) -> RetentionPolicy:
    """What ``CITEWALL_RETENTION_DAYS`` and ``CITEWALL_AUDIT_RETENTION_DAYS`` keep."""
    return RetentionPolicy(
        days=settings.retention_days,
        audit_days=settings.audit_retention_days,
        canned_replies=SMALL_TALK_REPLIES,
    )


def run_once(
    sessions: sessionmaker[Session],
    settings: Settings,
    *,
    holder: str,
    clock: Callable[[], datetime] = utcnow,
    actor: str = "retention",
    via: Via = "system",
) -> RetentionReport | None:
    """One retention run under the lease, then the unfinished erasures; None when another
    runner holds the lease. The lease is renewed before each batch; losing it stops the run
    (the next one goes on)."""

    def renew() -> bool:
        with sessions() as session:
            return leases.acquire(session, LEASE, holder, now=clock(), ttl=LEASE_TTL)

    if not renew():
        return None
    try:
        report = run_retention(
            sessions,
            retention_policy(settings),
            now=clock(),
            keep_going=renew,
            actor=actor,
            via=via,
        )
        resume_erasures(sessions, clock=clock, canned_replies=SMALL_TALK_REPLIES)
    finally:
        with sessions() as session:
            leases.release(session, LEASE, holder)
    return report


class RetentionSchedule:
    """A daemon thread running ``run_once`` every ``CITEWALL_RETENTION_INTERVAL_S`` while the
    app serves (started and stopped by its lifespan). A failed run is logged and retried at
    the next interval."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        settings: Settings,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._sessions = sessions
        self._settings = settings
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.holder = leases.holder_name()
        self.runs = 0

    @staticmethod
    def wanted(settings: Settings) -> bool:
        """Whether there is anything to schedule (either retention window is set)."""
        return settings.retention_days is not None or settings.audit_retention_days is not None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="citewall-retention", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                report = run_once(
                    self._sessions, self._settings, holder=self.holder, clock=self._clock
                )
                if report is not None and report.conversations:
                    logger.info(
                        "retention removed the words of %d conversation(s)", report.conversations
                    )
            except CitewallError as exc:
                logger.warning("retention run failed: %s", exc)
            self.runs += 1
            self._stop.wait(self._settings.retention_interval_s)
