"""The exposure budget replayed over a member's turns in simulated time.

The server decides for each turn once its context is retrieved (``chat.budget.ExposureGate``):
count the distinct internal cards in the member's exposure rows (and the reservations of their
turns still answering) created at or after ``now - window``; at ``cards`` or more
(``chat.corpus_protection.Budget.spent``) the turn is restricted to external cards, so it adds no
exposure. ``replay_budget`` applies that same rule, with the server's own ``Budget``, to turns
whose exposures were captured once through the real app; a test checks it against real turns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from citewall.chat.corpus_protection import Budget


@dataclass(frozen=True, slots=True)
class ReplayTurn:
    """One turn of a member: when, and the internal cards it exposes when not restricted."""

    at: datetime
    cards: frozenset[str]


@dataclass(slots=True)
class ReplayOutcome:
    #: Per turn (in time order): was it restricted?
    restricted: list[bool] = field(default_factory=list)
    #: The most distinct internal cards inside one window, over the whole replay.
    peak: int = 0

    @property
    def first_restricted(self) -> int | None:
        """The 1-based index of the first restricted turn (None: never)."""
        return next((i + 1 for i, r in enumerate(self.restricted) if r), None)


def replay_budget(turns: Sequence[ReplayTurn], budget: Budget) -> ReplayOutcome:
    """Which of ``turns`` the server's budget rule restricts, and the peak window count.

    >>> from datetime import UTC, timedelta
    >>> t0 = datetime(2030, 1, 1, tzinfo=UTC)
    >>> turns = [ReplayTurn(t0 + timedelta(hours=h), frozenset({c})) for h, c in
    ...          [(0, "a"), (1, "b"), (2, "c"), (30, "d")]]
    >>> out = replay_budget(turns, Budget(cards=2, window=timedelta(hours=24)))
    >>> out.restricted, out.peak
    ([False, False, True, False], 2)
    """
    outcome = ReplayOutcome()
    exposures: list[tuple[datetime, str]] = []
    for turn in sorted(turns, key=lambda t: t.at):
        since = budget.since(turn.at)
        exposures = [(at, card) for at, card in exposures if at >= since]
        restricted = budget.spent(len({card for _, card in exposures}))
        outcome.restricted.append(restricted)
        if not restricted:
            exposures.extend((turn.at, card) for card in sorted(turn.cards))
        outcome.peak = max(outcome.peak, len({card for _, card in exposures}))
    return outcome
