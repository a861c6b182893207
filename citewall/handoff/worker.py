"""The delivery loop ``citewall serve`` runs: a daemon thread calling ``deliver_due`` every
``CITEWALL_HANDOFF_POLL_S`` seconds, until stopped.

Every process (each replica, each ``--workers`` process) runs one; the lease in the database
keeps them from delivering the same handoff twice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

import httpx
from sqlalchemy.orm import Session, sessionmaker

from citewall.errors import CitewallError
from citewall.handoff.delivery import PassReport, Webhook, deliver_due
from citewall.storage.models import new_uuid

log = logging.getLogger(__name__)


class DeliveryWorker:
    """Runs delivery passes on a thread of its own; ``owner`` names it in leases and attempts."""

    def __init__(
        self,
        session_factory: sessionmaker[Session],
        webhook: Webhook,
        *,
        poll_s: float,
        clock: Callable[[], datetime],
    ) -> None:
        self.session_factory = session_factory
        self.webhook = webhook
        self.poll_s = poll_s
        self.clock = clock
        self.owner = new_uuid()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_pass(self, client: httpx.Client) -> PassReport:
        """One pass; a database or delivery failure is logged, and the next pass tries again."""
        try:
            return deliver_due(
                self.session_factory,
                self.webhook,
                owner=self.owner,
                clock=self.clock,
                client=client,
            )
        except CitewallError as exc:
            log.warning("handoff delivery pass failed: %s", exc)
            return PassReport()

    def _loop(self) -> None:
        with httpx.Client(follow_redirects=False) as client:
            while not self._stop.is_set():
                self.run_pass(client)
                self._stop.wait(self.poll_s)

    def start(self) -> None:
        """Start the thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop, name="citewall-handoff-delivery", daemon=True
            )
            self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Ask the loop to end and wait for it (an attempt under way finishes first)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None
