"""The sync schedule ``citewall serve`` keeps (unless ``CITEWALL_SYNC_SCHEDULER`` is off): every
``CITEWALL_SYNC_POLL_S`` seconds it claims the registered sources whose ``--every`` is due and
syncs them (docs/knowledge.md).

Every replica runs one. ``kb_sources.claim_due`` lets exactly one of them take each due
source, so a source is synced once per schedule however many replicas serve. A sync publishes
a new index version like any ingest, and every process picks it up on its next request.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

from sqlalchemy.orm import Session, sessionmaker

from citewall.config import Settings
from citewall.errors import CitewallError
from citewall.ingest.sync import SYNC_LEASE_S, SyncRunningError, sync_source
from citewall.retrieval.protocols import Embedder
from citewall.storage import kb_sources
from citewall.storage.kb_sources import SyncRun
from citewall.storage.types import utcnow

logger = logging.getLogger(__name__)


class SyncSchedule:
    """A daemon thread that syncs the due sources while the app serves (started and stopped
    by its lifespan). A failed pass is logged and the next poll tries again."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        settings: Settings,
        embedder: Embedder,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._sessions = sessions
        self._settings = settings
        self._embedder = embedder
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @staticmethod
    def wanted(settings: Settings) -> bool:
        """Whether `citewall serve` keeps the schedule: ``CITEWALL_SYNC_SCHEDULER`` on and
        ``CITEWALL_SYNC_POLL_S`` not 0."""
        return settings.sync_scheduler and settings.sync_poll_s > 0

    def run_once(self) -> list[SyncRun]:
        """Claim the due sources and sync each; the runs, in order (a source another process
        is syncing at that moment, from `citewall sync` or the admin API, is left to it)."""
        with self._sessions() as session:
            due = kb_sources.claim_due(session, self._clock(), SYNC_LEASE_S)
        runs = []
        for source in due:
            try:
                run = sync_source(
                    source.id,
                    self._settings,
                    session_factory=self._sessions,
                    embedder=self._embedder,
                )
            except SyncRunningError as exc:
                logger.info("source %d not synced: %s", source.id, exc)
                continue
            logger.info("source %d synced: %s %s", source.id, run.status, run.note)
            runs.append(run)
        return runs

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="citewall-sync", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _loop(self) -> None:
        while not self._stop.wait(self._settings.sync_poll_s):
            try:
                self.run_once()
            except CitewallError as exc:
                logger.warning("a scheduled sync failed: %s", exc)
