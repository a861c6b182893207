"""Wire schema of the abstention decision in use, for the admin pages (``/admin/abstention``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from citewall.retrieval.answerability import Decider, Thresholds
from citewall.retrieval.calibrated import CalibratedDecider
from citewall.retrieval.calibration import Calibration

__all__ = ["AbstentionCalibration", "AbstentionPublic", "AbstentionThresholds", "abstention_public"]


class AbstentionThresholds(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_dense: float
    min_coverage: float
    min_key_coverage: float


class AbstentionCalibration(BaseModel):
    """The fit stored with the KB version: when, on what, and how it did on its probes."""

    model_config = ConfigDict(extra="forbid")

    thresholds: AbstentionThresholds
    fitted_at: str
    kb_version: str | None
    kb_cards: int
    sampled_cards: int
    probes: dict[str, int]
    answered_rate: float
    refusal_rate: float
    refusal_by_kind: dict[str, float]
    signal_auc: dict[str, float]
    guard: str | None
    common_terms: int


class AbstentionPublic(BaseModel):
    """The thresholds in use and where they come from: ``override`` (set by the operator, they
    win), ``calibrated`` (fitted on the KB), ``default`` (no calibration stored), ``fixed``
    (given without calibration) or ``off`` (abstention disabled)."""

    model_config = ConfigDict(extra="forbid")

    source: Literal["override", "calibrated", "default", "fixed", "off"]
    thresholds: AbstentionThresholds | None
    calibration: AbstentionCalibration | None


def _thresholds(t: Thresholds) -> AbstentionThresholds:
    return AbstentionThresholds(**t.as_dict())


def _calibration(c: Calibration) -> AbstentionCalibration:
    return AbstentionCalibration(
        thresholds=_thresholds(c.thresholds),
        fitted_at=c.fitted_at,
        kb_version=c.kb_version,
        kb_cards=c.kb_cards,
        sampled_cards=c.sampled_cards,
        probes=c.probes,
        answered_rate=c.answered_rate,
        refusal_rate=c.refusal_rate,
        refusal_by_kind=c.refusal_by_kind,
        signal_auc=c.signal_auc,
        guard=c.guard,
        common_terms=len(c.vocabulary.common),
    )


def abstention_public(decider: Decider | None) -> AbstentionPublic:
    """What the runtime's decision is now."""
    if isinstance(decider, CalibratedDecider):
        now = decider.in_use()
        return AbstentionPublic(
            source=now.source,
            thresholds=_thresholds(now.thresholds),
            calibration=_calibration(now.calibration) if now.calibration is not None else None,
        )
    if isinstance(decider, Thresholds):
        return AbstentionPublic(source="fixed", thresholds=_thresholds(decider), calibration=None)
    return AbstentionPublic(source="off", thresholds=None, calibration=None)
