"""Abstention: does the server say "not found" when, and only when, the KB cannot answer?

Unanswerable questions (``kb/eval/unanswerable.{dev,test}.jsonl``: ``near_miss`` when the
topic is in the KB but the asked-for fact is not, ``uncovered`` when the topic is not) and the
answerable labelled questions are asked as a member; the metrics are ``not_found`` recall on
the first and the answered rate on the second.

The thresholds of ``retrieval.answerability`` are tuned here on the dev split only: a grid over
``min_dense`` x ``min_coverage`` keeps the pairs whose dev answered rate reaches
``TARGET_ANSWERED`` and picks the one with the best dev not_found recall (ties: the higher
answered rate, then the lower thresholds). Each signal's separating power on dev is reported
as its AUC (0.5: no signal).

Negative control: the same server with abstention switched off must lose its not_found recall.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from citewall.kb.audiences import EVERY_CARD
from citewall.retrieval.answerability import Signals, Thresholds, measure
from citewall.retrieval.calibration import auc
from citewall.retrieval.protocols import Retriever
from citewall_evals.data import DEMO, Dataset, read_jsonl

#: The dev answered rate a tuned pair must keep.
TARGET_ANSWERED = 0.95
DENSE_GRID = tuple(round(0.20 + 0.01 * i, 2) for i in range(46))  # 0.20 .. 0.65
COVERAGE_GRID = tuple(round(0.05 * i, 2) for i in range(21))  # 0.00 .. 1.00


@dataclass(frozen=True, slots=True)
class Unanswerable:
    id: str
    question: str
    kind: str
    near: tuple[str, ...]


def load_unanswerable(split: str, dataset: Dataset = DEMO) -> list[Unanswerable]:
    """The unanswerable questions of ``split`` (``dev`` or ``test``)."""
    return read_jsonl(
        dataset.label_file("unanswerable", split),
        "an unanswerable question",
        lambda row: Unanswerable(
            str(row["id"]), str(row["question"]), str(row["kind"]), tuple(row.get("near") or ())
        ),
    )


def signals_of(retriever: Retriever, questions: Sequence[str]) -> list[Signals]:
    """The answerability signals of each question, by the production retriever."""
    return [measure(q, retriever.retrieve(q, cards=EVERY_CARD)) for q in questions]


@dataclass(frozen=True, slots=True)
class Tuned:
    thresholds: Thresholds
    not_found_recall: float
    answered_rate: float
    signal_auc: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "min_dense": self.thresholds.min_dense,
            "min_coverage": self.thresholds.min_coverage,
            "dev_not_found_recall": round(self.not_found_recall, 4),
            "dev_answered_rate": round(self.answered_rate, 4),
            "target_answered_rate": TARGET_ANSWERED,
            "dev_signal_auc": self.signal_auc,
        }


def tune(answerable: Sequence[Signals], unanswerable: Sequence[Signals]) -> Tuned:
    """The thresholds with the best not_found recall at ``TARGET_ANSWERED`` (module doc)."""
    best: tuple[float, float, float, float] | None = None
    for d in DENSE_GRID:
        for c in COVERAGE_GRID:
            t = Thresholds(min_dense=d, min_coverage=c)
            answered = sum(t.answerable(s) for s in answerable) / max(1, len(answerable))
            if answered < TARGET_ANSWERED:
                continue
            recall = sum(not t.answerable(s) for s in unanswerable) / max(1, len(unanswerable))
            key = (recall, answered, -d, -c)
            if best is None or key > best:
                best = key
    if best is None:  # no pair keeps the target: never abstain on these signals
        d, c, recall, answered = DENSE_GRID[0], 0.0, 0.0, 1.0
    else:
        recall, answered, d, c = best[0], best[1], -best[2], -best[3]
    return Tuned(
        thresholds=Thresholds(min_dense=d, min_coverage=c),
        not_found_recall=recall,
        answered_rate=answered,
        signal_auc={
            name: round(
                auc(
                    [getattr(s, name) for s in answerable],
                    [getattr(s, name) for s in unanswerable],
                ),
                4,
            )
            for name in ("dense", "coverage")
        },
    )


@dataclass(frozen=True, slots=True)
class Abstention:
    """``not_found`` on unanswerable questions and ``answered`` on answerable ones."""

    unanswerable: int
    not_found: int
    answerable: int
    answered: int
    by_kind: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def not_found_recall(self) -> float:
        return self.not_found / self.unanswerable if self.unanswerable else 0.0

    @property
    def answered_rate(self) -> float:
        return self.answered / self.answerable if self.answerable else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "unanswerable": self.unanswerable,
            "not_found_recall": round(self.not_found_recall, 4),
            "answerable": self.answerable,
            "answered_rate": round(self.answered_rate, 4),
            "not_found_recall_by_kind": {
                k: round(n / total, 4) if total else None
                for k, (n, total) in sorted(self.by_kind.items())
            },
        }


def abstention(
    unanswerable: Sequence[tuple[str, str]], answerable_statuses: Sequence[str]
) -> Abstention:
    """From (kind, answer_status) of unanswerable questions and the answerable ones' statuses."""
    by_kind: dict[str, tuple[int, int]] = {}
    for kind, status in unanswerable:
        n, total = by_kind.get(kind, (0, 0))
        by_kind[kind] = (n + (status == "not_found"), total + 1)
    return Abstention(
        unanswerable=len(unanswerable),
        not_found=sum(1 for _, s in unanswerable if s == "not_found"),
        answerable=len(answerable_statuses),
        answered=sum(1 for s in answerable_statuses if s == "answered"),
        by_kind=by_kind,
    )
