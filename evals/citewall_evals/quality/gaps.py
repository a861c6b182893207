"""How well the knowledge-gaps report tells gaps from covered questions answered badly.

Labelled questions are asked as a member through the API, then the production report
(``storage.gaps.gap_questions``) reads the stored turns:

- **gaps**: the labelled unanswerable questions (``kb/eval/unanswerable.*``: near misses and
  uncovered topics) are the gaps; an answerable labelled question listed as a gap is a false
  one (the report's old fault: plans, 2FA and US shipping listed although the KB covers them).
- **answered badly**: an answerable question whose answer states none of its gold facts (the
  nugget judge of answer quality), or that was refused, is answered badly. Ratings are
  simulated: of the answers the judge finds wrong, every other one is rated "Not helpful"; of
  the right ones, every other one "Helpful" (members rate some answers, not all).

Controls: the report's earlier rule (``PreviousRule``): every ``not_found`` or low-support
answer a gap, ratings ignored, no answered-badly list; and coverage alone (``CoverageOnlyRule``):
a gap whenever no retrieved card covers the question, whatever its support.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from citewall.retrieval.covered import Reason, TurnOutcome, Verdict
from citewall.storage.gaps import GapQuestion


@dataclass(frozen=True, slots=True)
class PreviousRule:
    """The control: the report's rule before it had two lists."""

    low_support: float

    def reason(self, turn: TurnOutcome) -> Reason | None:
        """Everything it flags lands in the gaps list (``not_found`` or ``low_coverage``)."""
        if turn.answer_status == "not_found":
            return "not_found"
        if turn.support is not None and turn.support < self.low_support:
            return "low_coverage"
        return None


@dataclass(frozen=True, slots=True)
class CoverageOnlyRule:
    """A control: ``GapRule`` without the support condition on a gap."""

    min_coverage: float
    low_support: float

    def reason(self, turn: TurnOutcome) -> Reason | None:
        if turn.answer_status == "not_found":
            return "not_found"
        if turn.coverage < self.min_coverage:
            return "low_coverage"
        if turn.rating == "down":
            return "rated_down"
        if turn.support is not None and turn.support < self.low_support:
            return "low_support"
        return None


@dataclass(frozen=True, slots=True)
class ListScore:
    """One list against its labels: questions listed, of them right, and the labelled total."""

    listed: int
    right: int
    positives: int

    @property
    def precision(self) -> float:
        return self.right / self.listed if self.listed else 0.0

    @property
    def recall(self) -> float:
        return self.right / self.positives if self.positives else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "listed": self.listed,
            "right": self.right,
            "positives": self.positives,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
        }


def score_list(listed: Sequence[GapQuestion], positives: Collection[str]) -> ListScore:
    """Precision and recall of the distinct question texts listed against ``positives``.

    >>> from datetime import UTC, datetime
    >>> q = GapQuestion("m", "c", "where is your office?", "not_found", 0.3, datetime.now(UTC))
    >>> score_list([q, q], {"where is your office?", "saturday hours?"}).as_dict()["recall"]
    0.5
    """
    texts = {q.question for q in listed}
    return ListScore(len(texts), len(texts & set(positives)), len(set(positives)))


@dataclass(frozen=True, slots=True)
class GapLabels:
    """What the labelled questions say each list should hold."""

    #: Questions the KB does not cover (the unanswerable labelled questions).
    uncovered: frozenset[str]
    #: Answerable questions whose answer was wrong (stated none of their facts, or refused).
    answered_badly: frozenset[str]
    #: Every answerable question asked.
    covered: frozenset[str]


def score_report(
    found: Mapping[Verdict, Sequence[GapQuestion]], labels: GapLabels
) -> dict[str, Any]:
    """Both lists' precision and recall, and the covered questions listed as gaps."""
    gaps = found.get("gap", ())
    return {
        "gaps": score_list(gaps, labels.uncovered).as_dict(),
        "covered_listed_as_gaps": len({q.question for q in gaps} & labels.covered),
        "answered_badly": score_list(
            found.get("answered_badly", ()), labels.answered_badly
        ).as_dict(),
    }
