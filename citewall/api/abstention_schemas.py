"""Wire schema of the abstention decision in use, for the admin pages (``/admin/abstention``).

The models are built from the records themselves (``answerability.Thresholds``,
``calibration.Calibration``): a field added to a record is on the wire without restating it
here. One field is held back: the calibration's vocabulary (the KB's common terms, which can
be thousands of words) goes out only as its size, ``common_terms`` (``Calibration.summary``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, create_model

from citewall.retrieval.answerability import Decider, Thresholds
from citewall.retrieval.calibrated import CalibratedDecider
from citewall.retrieval.calibration import Calibration

__all__ = ["AbstentionCalibration", "AbstentionPublic", "AbstentionThresholds", "abstention_public"]

_STRICT = ConfigDict(extra="forbid")


def _fields(record: type, replace: dict[str, Any]) -> dict[str, Any]:
    """Pydantic field definitions of a dataclass ``record``, every field required; the types
    in ``replace`` stand in for the record's (a type of None drops the field)."""
    hints = get_type_hints(record)
    out: dict[str, Any] = {}
    for f in dataclasses.fields(record):
        kind = replace.get(f.name, hints[f.name])
        if kind is not None:
            out[f.name] = (kind, ...)
    return out


AbstentionThresholds: type[BaseModel] = create_model(
    "AbstentionThresholds", __config__=_STRICT, **_fields(Thresholds, {})
)

AbstentionCalibration: type[BaseModel] = create_model(
    "AbstentionCalibration",
    __config__=_STRICT,
    __doc__="The fit stored with the KB version: when, on what, and how it did on its probes.",
    **_fields(Calibration, {"thresholds": AbstentionThresholds, "vocabulary": None}),
    common_terms=(int, ...),
)


class AbstentionPublic(BaseModel):
    """The thresholds in use and where they come from: ``override`` (set by the operator, they
    win), ``calibrated`` (fitted on the KB), ``default`` (no calibration stored), ``fixed``
    (given without calibration) or ``off`` (abstention disabled)."""

    model_config = ConfigDict(extra="forbid")

    source: Literal["override", "calibrated", "default", "fixed", "off"]
    thresholds: AbstentionThresholds | None  # type: ignore[valid-type]
    calibration: AbstentionCalibration | None  # type: ignore[valid-type]


def abstention_public(decider: Decider | None) -> AbstentionPublic:
    """What the runtime's decision is now."""
    if isinstance(decider, CalibratedDecider):
        now = decider.in_use()
        return AbstentionPublic(
            source=now.source,
            thresholds=AbstentionThresholds(**now.thresholds.as_dict()),
            calibration=AbstentionCalibration(**now.calibration.summary())
            if now.calibration is not None
            else None,
        )
    if isinstance(decider, Thresholds):
        return AbstentionPublic(
            source="fixed", thresholds=AbstentionThresholds(**decider.as_dict()), calibration=None
        )
    return AbstentionPublic(source="off", thresholds=None, calibration=None)
