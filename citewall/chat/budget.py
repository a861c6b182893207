"""The exposure budget in a turn: reserve before the first token, settle with the turn
(docs/distillation.md, "The exposure budget").

One ``ExposureGate`` per turn. The pipeline calls ``admit`` once the context is retrieved and
before anything is generated: in one locked transaction (``storage.exposure.reservations``) it
counts the member's distinct internal cards in the window, exposed or reserved by turns still
answering, and either restricts the turn to external cards (the budget is spent; the first
such turn of the window is the admin alert) or reserves the context's internal cards. The
turn's save settles the reservation (``settles``): its exposure rows, what the answer cited or
copied, replace it in the same transaction. ``release`` drops the reservation of a turn that
showed nothing from the knowledge base; any other turn that is never stored keeps it, and it
counts until it leaves the window. If the reservation cannot be written, ``admit`` raises
``StorageError`` and nothing of the turn is generated.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from sqlalchemy.orm import Session, sessionmaker

from citewall.chat.corpus_protection import Budget
from citewall.errors import CitewallError
from citewall.retrieval.types import RetrievedContext
from citewall.runtime import Runtime
from citewall.storage.exposure.reservations import release_exposure, reserve_exposure
from citewall.storage.models import Restriction, new_uuid

log = logging.getLogger("citewall.exposure")


def budget_of(runtime: Runtime) -> Budget | None:
    """The exposure budget the settings ask for (None: off)."""
    s = runtime.settings
    return Budget.of(s.exposure_budget_cards, s.exposure_window_hours)


class ExposureGate:
    """One turn's hold on its member's exposure budget (stateful: one per turn)."""

    def __init__(
        self,
        session_factory: sessionmaker[Session],
        *,
        user_id: int,
        budget: Budget | None,
        clock: Callable[[], datetime],
    ) -> None:
        self._sessions = session_factory
        self._user_id = user_id
        self._budget = budget
        self._clock = clock
        self._key = new_uuid()
        self._holding = False
        #: Why the turn uses external cards only (set by ``admit``), or None.
        self.restricted: Restriction | None = None
        #: This is the window's first restricted turn: the one admins are told about.
        self.alert = False

    @classmethod
    def of(cls, runtime: Runtime, user_id: int) -> ExposureGate:
        """The gate for a turn of ``user_id`` under ``runtime``'s budget and clock."""
        return cls(
            runtime.session_factory, user_id=user_id, budget=budget_of(runtime), clock=runtime.clock
        )

    @property
    def settles(self) -> str | None:
        """The reservation the turn's save deletes (None: nothing is held)."""
        return self._key if self._holding else None

    def admit(self, context: RetrievedContext) -> Restriction | None:
        """Decide the budget for a turn answering from ``context`` (``pipeline.Admit``):
        reserve its internal cards, or restrict the turn when the budget is spent.
        ``StorageError`` when the database fails: the turn must stop before any token."""
        if self._budget is None:
            return None
        now = self._clock()
        with self._sessions() as session:
            decision = reserve_exposure(
                session,
                user_id=self._user_id,
                reservation=self._key,
                cards=[c.id for c in context.chunks if not c.is_external],
                budget_cards=self._budget.cards,
                since=self._budget.since(now),
                now=now,
            )
        self._holding = self._holding or bool(decision.reserved)
        if not decision.spent:
            return None
        self.restricted, self.alert = "exposure_budget", decision.first_restricted
        if self.alert:
            log.warning(
                "exposure budget spent: user %s reached %d distinct internal cards within %s; "
                "answers use external cards only until the window moves on",
                self._user_id,
                self._budget.cards,
                self._budget.window,
            )
        return self.restricted

    def release(self) -> None:
        """The turn showed nothing from the knowledge base: drop its reservation. Never
        raises; a reservation that cannot be dropped keeps counting until the window moves on
        (the budget fails closed)."""
        if not self._holding:
            return
        try:
            with self._sessions() as session:
                release_exposure(session, self._key)
        except CitewallError as exc:
            log.warning("an exposure reservation stays until it leaves the window: %s", exc)
            return
        self._holding = False
