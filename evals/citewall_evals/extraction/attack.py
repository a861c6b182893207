"""One extraction run: a fresh member, an attacker, a pace and a defence setting, measured.

The run drives the real app (``runner.run_attack``) on its own simulated clock, then reads
the server's stored record of the member's turns (``stored``) and scores the transcript:
internal sentences recovered verbatim, internal cards touched, internal facts stated, and the
query at which the server first restricted the member (the admin alert).
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi.testclient import TestClient

from citewall.api.app import create_app
from citewall.chat.corpus_protection import Budget
from citewall.config import Settings
from citewall.generation.factory import build_condenser, build_generator
from citewall.runtime import Runtime
from citewall.storage.users import create_user
from citewall_evals.extraction.attackers import Attacker
from citewall_evals.extraction.clock import FakeClock
from citewall_evals.extraction.facts import (
    FactJudge,
    InternalFact,
    JudgedAnswer,
    recovered_facts,
)
from citewall_evals.extraction.recovered import InternalText, recovery_curve
from citewall_evals.extraction.runner import AttackTurn, Pace, run_attack
from citewall_evals.extraction.stored import StoredAnswer, stored_answers
from citewall_evals.workspace import EvalWorkspace

#: The logger the server writes its exposure alert to (``chat.turn``).
ALERT_LOGGER = "citewall.exposure"


@dataclass(frozen=True, slots=True)
class Defences:
    """A named corpus-protection setting (the ``Settings`` fields of the same names; 0 turns
    the budget, the cap and the rate limit off)."""

    name: str
    exposure_budget_cards: int
    exposure_window_hours: float
    max_internal_sentences: int
    rate_limit_per_minute: int = 0

    @property
    def overrides(self) -> dict[str, object]:
        """The settings overrides that apply it."""
        return {
            "exposure_budget_cards": self.exposure_budget_cards,
            "exposure_window_hours": self.exposure_window_hours,
            "max_internal_sentences": self.max_internal_sentences,
            "rate_limit_per_minute": self.rate_limit_per_minute,
        }

    @property
    def budget(self) -> Budget | None:
        """The server's budget rule for this setting (None: no budget)."""
        return Budget.of(self.exposure_budget_cards, self.exposure_window_hours)


def defaults_on() -> Defences:
    """The corpus protection as shipped: the defaults of ``Settings``."""

    def default(name: str) -> Any:
        return Settings.model_fields[name].default

    return Defences(
        "on",
        exposure_budget_cards=int(default("exposure_budget_cards")),
        exposure_window_hours=float(default("exposure_window_hours")),
        max_internal_sentences=int(default("max_internal_sentences")),
        rate_limit_per_minute=int(default("rate_limit_per_minute")),
    )


#: No verbatim cap, no exposure budget (the rate limit as shipped: it is not a corpus
#: protection, and both settings face the same one).
OFF = dataclasses.replace(
    defaults_on(), name="off", exposure_budget_cards=0, max_internal_sentences=0
)


def protected_runtime(ws: EvalWorkspace, defences: Defences, clock: FakeClock) -> Runtime:
    """The workspace's runtime with ``defences`` applied and ``clock`` as its time."""
    settings = ws.settings.model_copy(update=defences.overrides)
    generator = build_generator(settings, ws.embedder)
    return dataclasses.replace(
        ws.runtime,
        settings=settings,
        generator=generator,
        condenser=build_condenser(settings, generator),
        clock=clock,
    )


@dataclass(frozen=True, slots=True)
class Scoring:
    """What every run is scored against: the internal text and cards, and the facts."""

    text: InternalText
    #: The same with the sentences public cards state too (for comparison with figures that
    #: counted them).
    text_with_public: InternalText
    internal_ids: frozenset[str]
    facts: Sequence[InternalFact]
    judge: FactJudge | None  # None: facts are not judged


@dataclass(slots=True)
class RunResult:
    """One run's transcript measured; every curve has one value per question."""

    name: str
    defences: str
    attacker: str
    pace: str
    recovered: list[float] = field(default_factory=list)
    recovered_with_public: list[float] = field(default_factory=list)
    touched: list[float] = field(default_factory=list)
    facts: list[float] = field(default_factory=list)
    #: The 1-based question whose answer was first stored restricted (None: never).
    flagged_at: int | None = None
    #: Alert lines the server logged (``citewall.exposure`` warnings) during the run.
    alerts: int = 0
    restricted: int = 0
    not_found: int = 0
    failed: int = 0
    rate_limited: int = 0
    simulated_h: float = 0.0
    wall_s: float = 0.0

    @property
    def queries(self) -> int:
        return len(self.recovered)

    def at(self, curve: Sequence[float], n: int) -> float:
        """A curve's value after ``n`` questions (its last one if the run was shorter)."""
        return curve[min(n, len(curve)) - 1] if curve and n > 0 else 0.0

    def summary(self, checkpoints: Sequence[int]) -> dict[str, Any]:
        return {
            "name": self.name,
            "defences": self.defences,
            "attacker": self.attacker,
            "pace": self.pace,
            "queries": self.queries,
            "recovered": {str(n): round(self.at(self.recovered, n), 4) for n in checkpoints},
            "recovered_with_public": {
                str(n): round(self.at(self.recovered_with_public, n), 4) for n in checkpoints
            },
            "touched": {str(n): round(self.at(self.touched, n), 4) for n in checkpoints},
            "facts": {str(n): round(self.at(self.facts, n), 4) for n in checkpoints},
            "flagged_at": self.flagged_at,
            "alerts_logged": self.alerts,
            "restricted_answers": self.restricted,
            "not_found_answers": self.not_found,
            "failed_requests": self.failed,
            "rate_limited_429s": self.rate_limited,
            "simulated_hours": round(self.simulated_h, 4),
            "wall_s": round(self.wall_s, 1),
        }


def new_member(ws: EvalWorkspace, name: str) -> tuple[int, str]:
    """A fresh member in the workspace, named after ``name`` (a run's name): (id, token)."""
    slug = re.sub(r"[^A-Za-z0-9._@-]+", "-", name).strip("-") or "member"
    with ws.runtime.session_factory() as session:
        user, token = create_user(session, slug, "member")
        session.commit()
        return user.id, token


@contextmanager
def captured_alerts() -> Iterator[list[logging.LogRecord]]:
    """The exposure alerts (warnings on ``citewall.exposure``) logged inside the block; they
    are kept from the console meanwhile (the run counts them instead)."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger(ALERT_LOGGER)
    handler, propagate = Keep(logging.WARNING), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield records
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def run_one(
    ws: EvalWorkspace,
    *,
    name: str,
    attacker: Attacker,
    pace: Pace,
    defences: Defences,
    queries: int,
    scoring: Scoring,
    on_turn: Callable[[AttackTurn], None] | None = None,
) -> RunResult:
    """Run ``attacker`` as a new member against the app with ``defences`` and measure it."""
    t0 = time.perf_counter()
    user_id, token = new_member(ws, name)
    clock = FakeClock()
    app = create_app(protected_runtime(ws, defences, clock))
    with (
        captured_alerts() as alerts,
        TestClient(app, raise_server_exceptions=False) as client,
    ):
        turns = run_attack(client, token, attacker, clock, pace, queries, on_turn=on_turn)
    stored = stored_answers(ws.runtime.session_factory, user_id)
    result = measure(name, defences.name, attacker.name, pace.name, turns, stored, scoring)
    result.alerts = len(alerts)
    result.simulated_h = clock.elapsed_s / 3600
    result.wall_s = time.perf_counter() - t0
    return result


def measure(
    name: str,
    defences: str,
    attacker: str,
    pace: str,
    turns: Sequence[AttackTurn],
    stored: Mapping[str, StoredAnswer],
    scoring: Scoring,
) -> RunResult:
    """Score a transcript against the stored record of its turns."""
    result = RunResult(name, defences, attacker, pace)
    result.recovered = recovery_curve(scoring.text, (t.answer for t in turns))
    result.recovered_with_public = recovery_curve(
        scoring.text_with_public, (t.answer for t in turns)
    )
    touched: set[str] = set()
    judged: list[JudgedAnswer] = []
    for turn in turns:
        answer = stored.get(turn.message_id)
        result.rate_limited += turn.rate_limited
        result.failed += turn.status != 200
        result.not_found += turn.answer_status == "not_found"
        if answer is not None:
            cards = answer.touched(scoring.internal_ids)
            touched |= cards
            if cards:
                judged.append(JudgedAnswer(turn.index, turn.answer, cards))
            if answer.restricted:
                result.restricted += 1
                if result.flagged_at is None:
                    result.flagged_at = turn.index
        result.touched.append(len(touched) / max(1, len(scoring.internal_ids)))
    result.facts = _fact_curve(scoring, judged, len(turns))
    return result


def _fact_curve(scoring: Scoring, judged: Sequence[JudgedAnswer], queries: int) -> list[float]:
    if scoring.judge is None or not scoring.facts:
        return [0.0] * queries
    first = recovered_facts(scoring.facts, judged, scoring.judge)
    found_by = [0] * (queries + 1)
    for index in first.values():
        found_by[index] += 1
    curve, total = [], 0
    for n in range(1, queries + 1):
        total += found_by[n]
        curve.append(total / len(scoring.facts))
    return curve
