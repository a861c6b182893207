"""One ``citewall eval kb`` run: its figures, the flat table thresholds and baselines read, and
whether it passed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from citewall_evals.quality.abstention import Abstention
from citewall_evals.quality.citations import CitationCounts
from citewall_evals.report.baseline import Comparison
from citewall_evals.retrieval.metrics import PathScores

#: The retrieval figures of each path in the flat table (name, ``PathScores`` attribute).
RETRIEVAL_FIGURES = (
    ("hit@1", "hit_at_1"),
    ("hit@5", "hit_at_5"),
    ("mrr", "mrr"),
    ("ndcg@10", "ndcg_at_10"),
    ("recall@10", "recall_at_10"),
)


@dataclass(slots=True)
class KbEvalResult:
    started_at: str
    questions_file: str
    #: Who the questions were asked and retrieved as (``RunViewers.describe``).
    asked_as: str = "a member in no group"
    #: Questions the run cannot score as meant (an expected card outside their groups).
    warnings: list[str] = field(default_factory=list)
    environment: dict[str, Any] = field(default_factory=dict)
    timings_s: dict[str, float] = field(default_factory=dict)
    judge: dict[str, Any] = field(default_factory=dict)
    retrieval: dict[str, PathScores] = field(default_factory=dict)
    abstention: Abstention | None = None
    citations: CitationCounts | None = None
    #: Nugget recall and off-topic rate of the questions with ``facts`` (None: none has any).
    answers: dict[str, Any] | None = None
    dangling: dict[str, Any] = field(default_factory=dict)
    per_question: list[dict[str, Any]] = field(default_factory=list)
    threshold_failures: list[str] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    baseline_note: str = ""

    @property
    def regressions(self) -> list[Comparison]:
        return [c for c in self.comparisons if c.regressed]

    @property
    def passed(self) -> bool:
        return not (self.threshold_failures or self.regressions)

    def metrics(self) -> dict[str, float]:
        """The figures thresholds and baselines compare; a figure with nothing to measure it
        on (no unanswerable question, no ``facts``, no answered answer) is left out."""
        out: dict[str, float] = {}
        for path, scores in self.retrieval.items():
            for name, attr in RETRIEVAL_FIGURES:
                out[f"retrieval.{path}.{name}"] = float(getattr(scores, attr))
        a = self.abstention
        if a is not None and a.answerable:
            out["answers.answered_rate"] = a.answered_rate
        if a is not None and a.unanswerable:
            out["answers.not_found_recall"] = a.not_found_recall
        if self.answers and self.answers.get("nuggets"):
            out["answers.nugget_recall"] = float(self.answers["nugget_recall"])
        c = self.citations
        if c is not None and c.sentences:
            out["citations.citation_recall"] = c.recall
        if c is not None and c.citations:
            out["citations.citation_precision"] = c.precision
        if self.dangling.get("answers"):
            out["dangling.rate"] = float(self.dangling["rate"])
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "questions_file": self.questions_file,
            "started_at": self.started_at,
            "asked_as": self.asked_as,
            "warnings": self.warnings,
            "passed": self.passed,
            "environment": self.environment,
            "timings_s": self.timings_s,
            "judge": self.judge,
            "retrieval": {path: s.as_dict() for path, s in self.retrieval.items()},
            "abstention": self.abstention.as_dict() if self.abstention is not None else {},
            "citations": self.citations.as_dict() if self.citations is not None else {},
            "answers": self.answers or {},
            "dangling": self.dangling,
            "metrics": self.metrics(),
            "threshold_failures": self.threshold_failures,
            "baseline_note": self.baseline_note,
            "comparisons": [
                {
                    "metric": c.metric,
                    "baseline": c.baseline,
                    "current": c.current,
                    "delta": c.delta,
                    "tolerance": c.tolerance,
                    "status": c.status,
                }
                for c in self.comparisons
            ],
            "regressions": [c.metric for c in self.regressions],
            "per_question": self.per_question,
        }
