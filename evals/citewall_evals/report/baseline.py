"""The committed baseline (``evals/baseline.json``) and the regression check against it.

The baseline holds one flat ``{metric: value}`` table per run profile (``fast``/``full`` x
split), because the fast subset scores differently from the full set. A metric regresses when
it moves in its bad direction by more than its tolerance. Every metric is higher-is-better
except the dangling-reference rates (``dangling.<generator>.rate``), which are lower-is-better.
Tolerances (absolute) are documented in docs/evaluation.md:

- retrieval metrics: 0.02 (the retriever is deterministic; a drop this size is a real change);
- citation recall/precision: 0.03 (the support judge is deterministic too, but small wording
  changes of the extractive answerer move it slightly);
- the dangling-reference detector's recall/precision on its labels: 0.02 (deterministic; a
  change of labels comes with a new baseline);
- dangling-reference rates: 0.10 (the local model answers a handful of questions, one answer
  of 4 to 12 is 0.08 to 0.25; the shipped generator is held to its threshold by the gate);
- judge agreement (leave-one-out accuracy): 0.05 (one label of ~45 is ~0.02).

A metric missing from the current run is a regression (something stopped being measured); a
metric missing from the baseline is reported as new.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citewall.errors import UserError

DEFAULT_TOLERANCE = 0.03
TOLERANCES: dict[str, float] = {
    "retrieval.": 0.02,
    "citations.": 0.03,
    "dangling.detector.": 0.02,
    "dangling.": 0.10,
    "judge.": 0.05,
}
#: Metrics where lower is better (a rise is the bad direction).
LOWER_IS_BETTER_SUFFIXES = (".rate",)


class BaselineError(UserError):
    """The baseline file is unreadable or malformed (names the file)."""


def lower_is_better(metric: str) -> bool:
    return metric.endswith(LOWER_IS_BETTER_SUFFIXES)


def tolerance_for(metric: str) -> float:
    for prefix, tol in TOLERANCES.items():
        if metric.startswith(prefix):
            return tol
    return DEFAULT_TOLERANCE


@dataclass(frozen=True, slots=True)
class Comparison:
    metric: str
    baseline: float | None
    current: float | None
    tolerance: float

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.current is None:
            return None
        return self.current - self.baseline

    @property
    def status(self) -> str:
        if self.current is None:
            return "missing"
        if self.baseline is None:
            return "new"
        assert self.delta is not None
        gain = -self.delta if lower_is_better(self.metric) else self.delta
        if gain < -self.tolerance - 1e-9:
            return "regressed"
        if gain > self.tolerance:
            return "improved"
        return "ok"

    @property
    def regressed(self) -> bool:
        return self.status in {"regressed", "missing"}


def load_baseline(path: Path) -> dict[str, Any]:
    """The whole baseline document (``{}`` when the file does not exist yet)."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise BaselineError(
            f"{path}: not JSON ({exc}); fix it or rerun with --update-baseline"
        ) from None
    if not isinstance(data, dict):
        raise BaselineError(f"{path}: expected a JSON object of profiles")
    return data


def compare(baseline: dict[str, float], current: dict[str, float]) -> list[Comparison]:
    """One comparison per metric in either table, sorted by name."""
    names = sorted(set(baseline) | set(current))
    return [
        Comparison(n, _num(baseline.get(n)), _num(current.get(n)), tolerance_for(n)) for n in names
    ]


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def write_baseline(
    path: Path, profile: str, metrics: dict[str, float], meta: dict[str, Any]
) -> None:
    """Replace one profile's table in the baseline file (other profiles are kept)."""
    data = load_baseline(path)
    data[profile] = {"metrics": {k: round(v, 4) for k, v in sorted(metrics.items())}, "meta": meta}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def profile_metrics(data: dict[str, Any], profile: str) -> dict[str, float] | None:
    """The metric table of ``profile``, or None when the baseline has no such profile."""
    entry = data.get(profile)
    if not isinstance(entry, dict) or not isinstance(entry.get("metrics"), dict):
        return None
    return {k: v for k, v in entry["metrics"].items() if _num(v) is not None}
