"""The calibration in use: stored with the KB version, reloaded when an ingest refits it.

Layout of ``settings.calibration_dir`` (``versioned_dir``, like the lexical index)::

    CURRENT            # one line: the live version
    v-<stamp>/calibration.json

Each calibration names the lexical index version (the KB version) its probes ran against.
On shared services it is pushed to the database with the other artifacts, so every replica
loads the same one (``factory.live_artifact``).

``CalibratedDecider`` is what the answer pipeline asks. The thresholds it applies, in order:
the operator's (``CITEWALL_ABSTAIN_MIN_DENSE`` / ``_MIN_COVERAGE`` set explicitly: they win),
the stored calibration, and the settings' defaults when no calibration is stored (a KB ingested
before calibration existed, or ``CITEWALL_CALIBRATION=false``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from citewall.retrieval.answerability import NO_VOCABULARY, Signals, Thresholds, Vocabulary, measure
from citewall.retrieval.calibration import Calibration
from citewall.retrieval.reloading import ArtifactError, ReloadingArtifact
from citewall.retrieval.types import RetrievedContext
from citewall.retrieval.versioned_dir import current_version, publish

FILE = "calibration.json"

#: Where the thresholds in use come from.
Source = Literal["override", "calibrated", "default"]


class CalibrationError(ArtifactError):
    """The stored calibration is missing or unreadable (the message says which file)."""


def save_calibration(directory: Path, calibration: Calibration) -> str:
    """Publish ``calibration`` atomically as the live version; returns the version."""

    def write(tmp: Path, _version: str) -> None:
        (tmp / FILE).write_text(calibration.to_json(), encoding="utf-8")

    return publish(directory, write)


def load_calibration(directory: Path) -> Calibration:
    """The live calibration in ``directory``; ``CalibrationError`` when there is none or it is
    corrupt."""
    version = current_version(directory)
    if version is None:
        raise CalibrationError(f"no calibration published in {directory} (run `citewall ingest`)")
    path = directory / version / FILE
    try:
        return Calibration.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CalibrationError(f"{path}: not a readable calibration: {exc}") from exc


@dataclass(frozen=True, slots=True)
class InUse:
    """The decision applied now: thresholds, the vocabulary key terms are judged by, and why."""

    thresholds: Thresholds
    vocabulary: Vocabulary
    source: Source
    calibration: Calibration | None


class CalibratedDecider:
    """``answerability.Decider`` over the live calibration (module docstring for the order)."""

    def __init__(
        self,
        live: ReloadingArtifact[Calibration] | None,
        *,
        default: Thresholds,
        override: Thresholds | None = None,
    ) -> None:
        self._live = live
        self._default = default
        self._override = override

    def in_use(self) -> InUse:
        calibration, _ = self._live.current() if self._live is not None else (None, None)
        vocabulary = calibration.vocabulary if calibration is not None else NO_VOCABULARY
        if self._override is not None:
            return InUse(self._override, vocabulary, "override", calibration)
        if calibration is not None:
            return InUse(calibration.thresholds, vocabulary, "calibrated", calibration)
        return InUse(self._default, vocabulary, "default", None)

    def measure(self, query: str, context: RetrievedContext) -> Signals:
        return measure(query, context, self.in_use().vocabulary)

    def answerable(self, signals: Signals) -> bool:
        return self.in_use().thresholds.answerable(signals)

    def status(self) -> dict[str, Any]:
        """For /readyz: the thresholds in use, where they come from, and the stored fit."""
        now = self.in_use()
        error = self._live.current()[1] if self._live is not None else "calibration disabled"
        return {
            "source": now.source,
            "thresholds": now.thresholds.as_dict(),
            "override": now.source == "override",
            "calibration": now.calibration.summary() if now.calibration is not None else None,
            "error": error if now.calibration is None else None,
        }
