"""The calibration in use: stored with the KB version, reloaded when an ingest refits it.

Layout of ``settings.calibration_dir`` (``versioned_dir``, like the lexical index)::

    CURRENT            # one line: the live version
    v-<stamp>/calibration.json
    v-<stamp>/probes/  # the probes' vectors (``sentence_store`` layout, keyed by model + text)

The probe vectors let the next ingest embed only the probes it has not seen: a KB change
alters a few cards' probes, the ~100 shipped off-domain questions never change.

Each calibration names the lexical index version (the KB version) its probes ran against.
On shared services it is pushed to the database with the other artifacts, so every replica
loads the same one (``factory.live_artifact``).

``CalibratedDecider`` is what the answer pipeline asks. The thresholds it applies, in order:
the operator's (``CITEWALL_ABSTAIN_MIN_DENSE`` / ``_MIN_COVERAGE`` set explicitly: they win),
the stored calibration, and the settings' defaults when no calibration is stored (a KB ingested
before calibration existed, or ``CITEWALL_CALIBRATION=false``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from citewall.retrieval.answerability import NO_VOCABULARY, Signals, Thresholds, Vocabulary, measure
from citewall.retrieval.calibration import Calibration
from citewall.retrieval.reloading import ArtifactError, ReloadingArtifact
from citewall.retrieval.sentence_store import (
    SentenceStoreError,
    SentenceVectors,
    load_vectors,
    sentence_key,
    write_vectors,
)
from citewall.retrieval.types import RetrievedContext
from citewall.retrieval.versioned_dir import current_version, publish

FILE = "calibration.json"

#: Where the thresholds in use come from.
Source = Literal["override", "calibrated", "default"]


class CalibrationError(ArtifactError):
    """The stored calibration is missing or unreadable (the message says which file)."""


PROBES = "probes"


@dataclass(frozen=True, slots=True)
class ProbeVectors:
    """The probes' vectors, row i for ``keys[i]`` (``probe_key``)."""

    keys: Sequence[bytes]
    vectors: npt.NDArray[np.float32]


def probe_key(model: str, text: str) -> bytes:
    """The key of a probe's vector: the model's name and the probe's text."""
    return sentence_key(f"{model}\0{text}")


def save_calibration(
    directory: Path, calibration: Calibration, probes: ProbeVectors | None = None
) -> str:
    """Publish ``calibration`` (with its probes' vectors) atomically as the live version;
    returns the version."""

    def write(tmp: Path, version: str) -> None:
        (tmp / FILE).write_text(calibration.to_json(), encoding="utf-8")
        if probes is not None:
            (tmp / PROBES).mkdir()
            write_vectors(tmp / PROBES, probes.keys, probes.vectors, version)

    return publish(directory, write)


def load_probe_vectors(directory: Path) -> SentenceVectors | None:
    """The live calibration's probe vectors, or None when there are none or they are
    unreadable (the probes are then embedded again)."""
    version = current_version(directory)
    if version is None or not (directory / version / PROBES).is_dir():
        return None
    try:
        return load_vectors(directory / version / PROBES, version)
    except SentenceStoreError:
        return None


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
