"""Calibrate the support judge on the hand-labelled sample and report its agreement.

``kb/eval/support_labels.jsonl`` holds ``{"sentence", "card_id", "supports"}`` pairs written by
hand (true supports, and near misses: swapped numbers, swapped carriers, unrelated cards).
Calibration is a small grid search over ``weight`` x ``min_key`` with, for each, the threshold
that maximises balanced accuracy (midpoint between neighbouring scores, so it generalises a
little better than sitting on a labelled score). Agreement is reported twice: on the sample
itself (the fitted parameters) and by leave-one-out cross-validation (refit without each pair,
judge that pair), which is the honest estimate for a sample this small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citewall_evals.data import read_jsonl
from citewall_evals.quality.support import SupportJudge, SupportThresholds, UnitFeatures
from citewall_evals.redteam.catalogue import CatalogueError

WEIGHTS = (0.0, 0.25, 0.5, 0.6, 0.75, 0.9, 1.0)
MIN_KEYS = (0.0, 0.5, 0.75, 1.0)


@dataclass(frozen=True, slots=True)
class SupportLabel:
    sentence: str
    card_id: str
    supports: bool


@dataclass(slots=True)
class Confusion:
    """Binary confusion counts (positive = "supports")."""

    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0

    def add(self, predicted: bool, actual: bool) -> None:
        if predicted and actual:
            self.tp += 1
        elif predicted:
            self.fp += 1
        elif actual:
            self.fn += 1
        else:
            self.tn += 1

    @property
    def total(self) -> int:
        return self.tp + self.fp + self.tn + self.fn

    @property
    def accuracy(self) -> float:
        return (self.tp + self.tn) / self.total if self.total else 0.0

    @property
    def balanced_accuracy(self) -> float:
        pos, neg = self.tp + self.fn, self.tn + self.fp
        tpr = self.tp / pos if pos else 1.0
        tnr = self.tn / neg if neg else 1.0
        return (tpr + tnr) / 2

    @property
    def cohen_kappa(self) -> float:
        """Agreement beyond chance between the judge and the hand labels."""
        n = self.total
        if not n:
            return 0.0
        po = self.accuracy
        pe = (
            (self.tp + self.fp) * (self.tp + self.fn) + (self.tn + self.fn) * (self.tn + self.fp)
        ) / (n * n)
        return (po - pe) / (1 - pe) if pe < 1 else 1.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "tp": self.tp,
            "fp": self.fp,
            "tn": self.tn,
            "fn": self.fn,
            "accuracy": self.accuracy,
            "balanced_accuracy": self.balanced_accuracy,
            "kappa": self.cohen_kappa,
        }


@dataclass(slots=True)
class CalibrationResult:
    thresholds: SupportThresholds
    fitted: Confusion
    loo: Confusion
    n_labels: int
    errors: list[dict[str, Any]] = field(default_factory=list)
    #: Best balanced accuracy reached at each cosine weight (over min_key and threshold):
    #: shows what the embedding adds over lexical overlap on this sample.
    grid: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "thresholds": self.thresholds.as_dict(),
            "fitted": self.fitted.as_dict(),
            "leave_one_out": self.loo.as_dict(),
            "labels": self.n_labels,
            "disagreements": self.errors,
            "grid_balanced_accuracy_by_weight": self.grid,
        }


def load_labels(path: Path) -> list[SupportLabel]:
    """Read the labelled pairs; a malformed line is an error naming file and line."""
    return read_jsonl(
        path,
        "a support label",
        lambda row: SupportLabel(str(row["sentence"]), str(row["card_id"]), bool(row["supports"])),
    )


def _example_score(feats: Sequence[UnitFeatures], weight: float, min_key: float) -> float:
    return max((f.score(weight) for f in feats if f.key >= min_key), default=-1.0)


def _best_threshold(scored: Sequence[tuple[float, bool]]) -> tuple[float, float]:
    """The threshold (midpoint between distinct scores) with the best balanced accuracy.

    One sweep over the scores sorted high to low: O(n log n), so leave-one-out stays cheap.
    """
    if not scored:
        return 0.5, 0.0
    pos = sum(1 for _, y in scored if y)
    neg = len(scored) - pos
    ordered = sorted(scored, key=lambda sy: -sy[0])

    def bacc(tp: int, fp: int) -> float:
        tpr = tp / pos if pos else 1.0
        tnr = (neg - fp) / neg if neg else 1.0
        return (tpr + tnr) / 2

    # Threshold above every score: nothing predicted positive.
    best_b, best_t = bacc(0, 0), ordered[0][0] + 1e-6
    tp = fp = 0
    for i, (score, actual) in enumerate(ordered):
        tp += actual
        fp += not actual
        nxt = ordered[i + 1][0] if i + 1 < len(ordered) else None
        if nxt is not None and nxt == score:
            continue  # only cut between distinct scores
        t = (score + nxt) / 2 if nxt is not None else score - 1e-6
        b = bacc(tp, fp)
        # Strictly better only: on ties the higher threshold (seen first) stays, a stricter
        # judge being the safer mistake.
        if b > best_b + 1e-12:
            best_b, best_t = b, t
    return best_t, best_b


def fit(features: Sequence[Sequence[UnitFeatures]], labels: Sequence[bool]) -> SupportThresholds:
    """Grid search over weight x min_key, best threshold for each; best balanced accuracy wins."""
    best: tuple[float, SupportThresholds] | None = None
    for weight in WEIGHTS:
        for min_key in MIN_KEYS:
            scored = [
                (_example_score(f, weight, min_key), y)
                for f, y in zip(features, labels, strict=True)
            ]
            threshold, bacc = _best_threshold(scored)
            cand = SupportThresholds(weight=weight, threshold=round(threshold, 4), min_key=min_key)
            if best is None or bacc > best[0] + 1e-12:
                best = (bacc, cand)
    assert best is not None
    return best[1]


def calibrate(judge: SupportJudge, labels: Sequence[SupportLabel]) -> CalibrationResult:
    """Fit the judge's thresholds on ``labels`` (sets ``judge.thresholds``) and report agreement."""
    if not labels:
        raise CatalogueError("no support labels to calibrate on")
    judge.warm({lab.card_id for lab in labels}, [lab.sentence for lab in labels])
    feats = [judge.features(lab.sentence, [lab.card_id]) for lab in labels]
    ys = [lab.supports for lab in labels]
    chosen = fit(feats, ys)
    fitted = Confusion()
    errors: list[dict[str, Any]] = []
    for lab, f in zip(labels, feats, strict=True):
        predicted = _example_score(f, chosen.weight, chosen.min_key) >= chosen.threshold
        fitted.add(predicted, lab.supports)
        if predicted != lab.supports:
            errors.append({"sentence": lab.sentence, "card_id": lab.card_id, "label": lab.supports})
    loo = Confusion()
    for i in range(len(labels)):
        rest_f = [f for j, f in enumerate(feats) if j != i]
        rest_y = [y for j, y in enumerate(ys) if j != i]
        if not rest_f:
            continue
        t = fit(rest_f, rest_y)
        loo.add(_example_score(feats[i], t.weight, t.min_key) >= t.threshold, ys[i])
    grid = {
        f"{w:g}": round(
            max(
                _best_threshold(
                    [(_example_score(f, w, k), y) for f, y in zip(feats, ys, strict=True)]
                )[1]
                for k in MIN_KEYS
            ),
            4,
        )
        for w in WEIGHTS
    }
    judge.thresholds = chosen
    return CalibrationResult(chosen, fitted, loo, len(labels), errors, grid)
