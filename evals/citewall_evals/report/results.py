"""One evaluation run's results: every metric, the red-team table, the baseline comparison.

The report writers read only this object (as a plain dict from ``as_dict``), so they can be
tested with a hand-built result and a JSON copy of every run is written next to the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from citewall_evals.quality.citations import CitationCounts
from citewall_evals.redteam.gate import CaseResult
from citewall_evals.report.baseline import Comparison
from citewall_evals.retrieval.metrics import PathScores


@dataclass(slots=True)
class KbResult:
    """The answer figures of a knowledge base other than the demo: retrieval, citation and
    answer quality, abstention and follow-ups, each with its control. No red-team gate, no
    dangling-reference check and no baseline: their labels are written for the demo's cards."""

    name: str
    environment: dict[str, Any] = field(default_factory=dict)
    timings_s: dict[str, float] = field(default_factory=dict)
    judge: dict[str, Any] = field(default_factory=dict)
    #: Scores per retrieval path, and ``control`` (the served rankings against mismatched gold).
    retrieval: dict[str, PathScores] = field(default_factory=dict)
    #: Citation quality of the replayed answers (``None`` until measured).
    citations: CitationCounts | None = None
    replay_failures: list[str] = field(default_factory=list)
    answers: dict[str, Any] = field(default_factory=dict)
    answering: dict[str, Any] = field(default_factory=dict)

    @property
    def control_failures(self) -> list[str]:
        return control_failures(self.answers, self.answering)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "environment": self.environment,
            "timings_s": self.timings_s,
            "judge": self.judge,
            "retrieval": {path: s.as_dict() for path, s in self.retrieval.items()},
            "citations": self.citations.as_dict() if self.citations is not None else {},
            "replay_failures": self.replay_failures,
            "answers": self.answers,
            "answering": self.answering,
            "control_failures": self.control_failures,
        }


@dataclass(slots=True)
class EvalResult:
    """Everything ``citewall eval`` measured in one run."""

    profile: str
    started_at: str
    environment: dict[str, Any] = field(default_factory=dict)
    timings_s: dict[str, float] = field(default_factory=dict)
    judge: dict[str, Any] = field(default_factory=dict)
    #: Scores per retrieval path (``retrieval.paths``: dense, bm25, rrf, full, served).
    retrieval: dict[str, PathScores] = field(default_factory=dict)
    #: Citation quality of the extractive generator's replayed answers (``None`` until measured).
    citations: CitationCounts | None = None
    #: The same per replayed generator (extractive, unprotected, the adversary in full runs).
    citations_by_generator: dict[str, CitationCounts] = field(default_factory=dict)
    replay_failures: list[str] = field(default_factory=list)
    dangling: dict[str, Any] = field(default_factory=dict)
    #: One row per red-team case and generator, and the access probes (``redteam.gate``).
    redteam: list[CaseResult] = field(default_factory=list)
    redteam_cases: dict[str, int] = field(default_factory=dict)
    #: Nugget recall and off-topic rate per generator, with controls (``quality.answers``).
    answers: dict[str, Any] = field(default_factory=dict)
    #: Abstention, follow-up retrieval and small talk, with controls (``evals.answering``).
    answering: dict[str, Any] = field(default_factory=dict)
    #: Answer quality with the corpus protection on and off (``quality.protection``).
    protection: dict[str, Any] = field(default_factory=dict)
    #: The staff-only detector and staff sentences in member prose, with controls
    #: (``quality.staff_only``).
    staff_only: dict[str, Any] = field(default_factory=dict)
    comparisons: list[Comparison] = field(default_factory=list)
    baseline_note: str = ""
    #: The other knowledge bases measured (``citewall eval --kb``), by name.
    knowledge_bases: dict[str, KbResult] = field(default_factory=dict)

    @property
    def gate_failures(self) -> list[CaseResult]:
        return [r for r in self.redteam if r.verdict != "pass"]

    @property
    def regressions(self) -> list[Comparison]:
        return [c for c in self.comparisons if c.regressed]

    @property
    def dangling_failures(self) -> list[str]:
        """Generators whose dangling-reference rate fails their role (see ``dangling_check``)."""
        rows = (self.dangling.get("generators") or {}).items()
        return [name for name, r in rows if r.get("verdict") == "fail"]

    @property
    def control_failures(self) -> list[str]:
        """Answer metrics whose negative control did not score badly: such a metric cannot
        tell good from bad on this run, so the run fails."""
        return control_failures(self.answers, self.answering, self.staff_only)

    @property
    def kb_failures(self) -> list[str]:
        """Replay failures and failed controls of the other knowledge bases, by name."""
        return [
            f"{name}: {failure}"
            for name, kb in self.knowledge_bases.items()
            for failure in [*kb.replay_failures, *kb.control_failures]
        ]

    @property
    def passed(self) -> bool:
        return not (
            self.gate_failures
            or self.regressions
            or self.dangling_failures
            or self.replay_failures
            or self.control_failures
            or self.kb_failures
        )

    def metrics(self) -> dict[str, float]:
        """The flat table compared against (and stored as) the baseline. Higher is better."""
        out: dict[str, float] = {}
        for path, scores in self.retrieval.items():
            out[f"retrieval.{path}.ndcg@10"] = scores.ndcg_at_10
            out[f"retrieval.{path}.recall@10"] = scores.recall_at_10
            out[f"retrieval.{path}.mrr"] = scores.mrr
        if self.citations is not None:
            out["citations.citation_recall"] = self.citations.recall
            out["citations.citation_precision"] = self.citations.precision
        detector = self.dangling.get("detector") or {}
        for name in ("recall", "precision"):
            if isinstance(detector.get(name), int | float):
                out[f"dangling.detector.{name}"] = float(detector[name])
        for name, row in (self.dangling.get("generators") or {}).items():
            if row.get("role") != "attacker" and row.get("answers"):
                out[f"dangling.{name}.rate"] = float(row["rate"])
        loo = (self.judge.get("leave_one_out") or {}).get("accuracy")
        if isinstance(loo, int | float):
            out["judge.loo_accuracy"] = float(loo)
        if self.redteam:
            passed = sum(1 for r in self.redteam if r.verdict == "pass")
            out["redteam.pass_rate"] = passed / len(self.redteam)
        extractive = (self.answers.get("generators") or {}).get("extractive") or {}
        if extractive:
            out["answers.extractive.nugget_recall"] = float(extractive["nugget_recall"])
            out["answers.extractive.on_topic_rate"] = 1.0 - float(extractive["off_topic_rate"])
            opening = extractive.get("first_sentence") or {}
            if opening.get("eligible"):
                out["answers.extractive.first_sentence_rate"] = float(opening["rate"])
        abst = self.answering.get("abstention") or {}
        if abst:
            out["abstention.not_found_recall"] = float(abst["not_found_recall"])
            out["abstention.answered_rate"] = float(abst["answered_rate"])
        follow = self.answering.get("followups") or {}
        if follow:
            out["followups.context_ndcg"] = float(follow["context_ndcg"])
            out["followups.switch_context_ndcg"] = float(follow["switch_context_ndcg"])
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "started_at": self.started_at,
            "passed": self.passed,
            "environment": self.environment,
            "timings_s": self.timings_s,
            "judge": self.judge,
            "retrieval": {path: s.as_dict() for path, s in self.retrieval.items()},
            "citations": self.citations.as_dict() if self.citations is not None else {},
            "citations_by_generator": {
                name: c.as_dict() for name, c in self.citations_by_generator.items()
            },
            "replay_failures": self.replay_failures,
            "dangling": self.dangling,
            "redteam": [r.as_dict() for r in self.redteam],
            "redteam_cases": self.redteam_cases,
            "answers": self.answers,
            "answering": self.answering,
            "protection": self.protection,
            "staff_only": self.staff_only,
            "control_failures": self.control_failures,
            "metrics": self.metrics(),
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
            "gate_failures": len(self.gate_failures),
            "dangling_failures": self.dangling_failures,
            "regressions": [c.metric for c in self.regressions],
            "knowledge_bases": {name: kb.as_dict() for name, kb in self.knowledge_bases.items()},
            "kb_failures": self.kb_failures,
        }


#: A control "scores badly" when it is at least this far from the real figure.
CONTROL_MARGIN = 0.2


def control_failures(
    answers: dict[str, Any], answering: dict[str, Any], staff_only: dict[str, Any] | None = None
) -> list[str]:
    """Which answer metrics' negative controls came too close to the real figures."""
    failures: list[str] = []
    detector = (staff_only or {}).get("detector") or {}
    if detector and detector["control"]["precision"] > detector["precision"] - CONTROL_MARGIN:
        failures.append("staff_only.detector.precision control")
    off = ((staff_only or {}).get("passthrough") or {}).get("check_off") or {}
    if off and off["leaked"] < off["sentences"]:  # with the check off, every one goes out
        failures.append("staff_only.passthrough control")
    for name, row in (answers.get("generators") or {}).items():
        control = row.get("control") or {}
        if row.get("nuggets") and control.get("nugget_recall", 0.0) > max(
            0.0, row["nugget_recall"] - CONTROL_MARGIN
        ):
            failures.append(f"answers.{name}.nugget_recall control")
        if row.get("sentences") and control.get("off_topic_rate", 1.0) < min(
            1.0, row["off_topic_rate"] + CONTROL_MARGIN
        ):
            failures.append(f"answers.{name}.off_topic_rate control")
        opening = row.get("first_sentence") or {}
        opening_control = row.get("first_sentence_control") or {}
        if opening.get("eligible") and opening_control.get("rate", 0.0) > max(
            0.0, opening["rate"] - CONTROL_MARGIN
        ):
            failures.append(f"answers.{name}.first_sentence control")
    abst, abst_control = answering.get("abstention"), answering.get("abstention_control")
    if (
        abst
        and abst_control
        and abst_control["not_found_recall"] > abst["not_found_recall"] - CONTROL_MARGIN / 2
    ):
        failures.append("abstention.not_found_recall control")
    follow = answering.get("followups") or {}
    if follow and follow["control_ndcg"] > follow["context_ndcg"] - CONTROL_MARGIN:
        failures.append("followups.context_ndcg control")
    return failures
