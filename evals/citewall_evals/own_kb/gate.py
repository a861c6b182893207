"""What makes ``citewall eval kb`` fail: ``--min-*`` thresholds and a saved baseline.

Thresholds are floors on the run's flat figures (``KbEvalResult.metrics``), one ceiling on the
dangling-reference rate. A figure a threshold names that the run could not measure (no
unanswerable question for ``--min-not-found-recall``, no ``facts`` for ``--min-nugget-recall``)
fails it: an unmeasured figure is not a pass. The baseline is compared as the demo's is
(``report.baseline``: the same tolerances, the same directions), in a profile of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: The baseline profile a team's KB figures are saved under.
PROFILE = "kb"

#: Threshold name (``--min-<name>`` with dashes) -> the figure it bounds from below.
FLOORS = {
    "hit_at_1": "retrieval.served.hit@1",
    "hit_at_5": "retrieval.served.hit@5",
    "mrr": "retrieval.served.mrr",
    "answered": "answers.answered_rate",
    "not_found_recall": "answers.not_found_recall",
    "nugget_recall": "answers.nugget_recall",
    "citation_precision": "citations.citation_precision",
    "citation_recall": "citations.citation_recall",
}
#: The one figure bounded from above (``--max-dangling-rate``).
DANGLING = "dangling.rate"


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The floors given (by name of ``FLOORS``) and the dangling-reference ceiling, if any."""

    floors: Mapping[str, float]
    max_dangling_rate: float | None = None

    def failures(self, metrics: Mapping[str, float]) -> list[str]:
        """One line per figure outside its bound, saying which and by how much.

        >>> Thresholds({"mrr": 0.8}).failures({"retrieval.served.mrr": 0.5})
        ['retrieval.served.mrr 0.500 < --min-mrr 0.800']
        >>> Thresholds({"nugget_recall": 0.5}).failures({})
        ['answers.nugget_recall not measured (--min-nugget-recall 0.500)']
        """
        out: list[str] = []
        for name, floor in sorted(self.floors.items()):
            metric, option = FLOORS[name], f"--min-{name.replace('_', '-')}"
            value = metrics.get(metric)
            if value is None:
                out.append(f"{metric} not measured ({option} {floor:.3f})")
            elif value < floor - 1e-9:
                out.append(f"{metric} {value:.3f} < {option} {floor:.3f}")
        if self.max_dangling_rate is not None:
            value = metrics.get(DANGLING)
            if value is None:
                out.append(f"{DANGLING} not measured (--max-dangling-rate)")
            elif value > self.max_dangling_rate + 1e-9:
                out.append(
                    f"{DANGLING} {value:.3f} > --max-dangling-rate {self.max_dangling_rate:.3f}"
                )
        return out
