"""The dangling-reference check of ``citewall eval``.

Two measurements, both recomputed on every run:

- the **detector** (``dangling.dangling_references``) against the hand labels in
  ``kb/eval/dangling_labels.jsonl``: answer-level recall and precision, and the share of
  labelled spans it finds, per label set (``dev``: read before the detector was written;
  ``holdout``: labelled after, never used to change it);
- the **rate** per generator: the share of member answers (``answer`` of ``POST /api/v1/chat``)
  with at least one dangling reference.

What a rate means depends on the generator's role:

- ``shipped`` (the extractive generator): its prose is what members get by default; the gate
  fails when its rate exceeds ``DANGLING_THRESHOLD``;
- ``attacker`` (the adversarial model): it writes "Sources:" lists and echoes its prompt, and
  the serve boundary only removes markers and link syntax, so its prose keeps them: it is
  expected above the threshold, and the gate fails if it is not (a detector that no longer
  sees the adversary is broken);
- ``real model`` (SmolLM2 on llama.cpp): what the shipped prompt gets from a small real model.
  Reported against the threshold and compared with the baseline, but it does not gate: which
  model sits behind the OpenAI-compatible generator is the deployment's choice.

A generator that answered nothing fails in every role: an unmeasured rate is not a pass.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citewall_evals.data import read_jsonl
from citewall_evals.member_answers import MemberAnswer
from citewall_evals.quality.dangling import DanglingReference, dangling_references

#: Largest share of a shipped generator's member answers that may hold a dangling reference:
#: one answer in twenty. The extractive generator copies card sentences, so its rate is a
#: property of the KB and of its sentence filter: 0/12 (fast) and 2/136 (full) on the test
#: split, both "go through this checklist" from a public card the member is shown (false
#: alarms of a detector that does not see the served sources). 0 would fail on those; models
#: that write references score far above (SmolLM2 0.75, the adversary 1.0). docs/evaluation.md.
DANGLING_THRESHOLD = 0.05

ROLES = {"extractive": "shipped", "adversary": "attacker", "smollm2": "real model"}
#: Flagged answers quoted in the report, per generator.
EXAMPLES_PER_GENERATOR = 5


@dataclass(frozen=True, slots=True)
class LabelledAnswer:
    """One row of ``kb/eval/dangling_labels.jsonl``."""

    label_set: str
    generator: str
    question_id: str
    question: str
    answer: str
    dangling: bool
    spans: tuple[str, ...]
    note: str = ""


def load_dangling_labels(path: Path) -> list[LabelledAnswer]:
    """Read the labels; a span must be a verbatim substring of its answer."""
    return read_jsonl(path, "a dangling-reference label", _labelled_answer)


def _labelled_answer(raw: dict[str, Any]) -> LabelledAnswer:
    row = LabelledAnswer(
        label_set=str(raw["set"]),
        generator=str(raw["generator"]),
        question_id=str(raw["question_id"]),
        question=str(raw["question"]),
        answer=str(raw["answer"]),
        dangling=bool(raw["dangling"]),
        spans=tuple(str(s) for s in raw["spans"]),
        note=str(raw.get("note", "")),
    )
    missing = [s for s in row.spans if s not in row.answer]
    if missing or row.dangling != bool(row.spans):
        raise ValueError(
            "spans must be in the answer and present exactly when dangling is true "
            f"(bad span: {missing[:1]})"
        )
    return row


def _overlaps(refs: Sequence[DanglingReference], text: str, span: str) -> bool:
    start = text.find(span)
    while start != -1:
        if any(r.start < start + len(span) and r.end > start for r in refs):
            return True
        start = text.find(span, start + 1)
    return False


@dataclass(slots=True)
class DetectorScore:
    """Answer-level confusion counts and span coverage on a set of labels."""

    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0
    spans: int = 0
    spans_found: int = 0

    @property
    def labels(self) -> int:
        return self.tp + self.fp + self.tn + self.fn

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def span_recall(self) -> float:
        return self.spans_found / self.spans if self.spans else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "labels": self.labels,
            "dangling": self.tp + self.fn,
            "clean": self.tn + self.fp,
            "recall": self.recall,
            "precision": self.precision,
            "span_recall": self.span_recall,
            "tp": self.tp,
            "fp": self.fp,
            "tn": self.tn,
            "fn": self.fn,
            "spans": self.spans,
            "spans_found": self.spans_found,
        }


def score_detector(
    labels: Sequence[LabelledAnswer], internal_titles: Iterable[str]
) -> dict[str, Any]:
    """The detector on every label: overall, per label set and per generator, and its errors."""
    titles = list(internal_titles)
    overall = DetectorScore()
    groups: dict[str, DetectorScore] = {}
    errors: list[dict[str, str]] = []
    for row in labels:
        refs = dangling_references(row.answer, titles, [row.question])
        found = bool(refs)
        for score in (
            overall,
            groups.setdefault(f"set {row.label_set}", DetectorScore()),
            groups.setdefault(f"generator {row.generator}", DetectorScore()),
        ):
            if found and row.dangling:
                score.tp += 1
            elif found:
                score.fp += 1
            elif row.dangling:
                score.fn += 1
            else:
                score.tn += 1
            score.spans += len(row.spans)
            score.spans_found += sum(_overlaps(refs, row.answer, s) for s in row.spans)
        if found != row.dangling:
            errors.append(
                {
                    "set": row.label_set,
                    "generator": row.generator,
                    "question": row.question_id,
                    "error": "false alarm" if found else "missed",
                    "detail": refs[0].text if found else row.spans[0],
                }
            )
    return {
        **overall.as_dict(),
        "groups": {name: s.as_dict() for name, s in sorted(groups.items())},
        "errors": errors,
    }


@dataclass(slots=True)
class GeneratorRate:
    """The dangling-reference rate of one generator's member answers."""

    generator: str
    role: str
    threshold: float = DANGLING_THRESHOLD
    answers: int = 0
    dangling: int = 0
    references: int = 0
    failed_requests: int = 0
    by_rule: Counter[str] = field(default_factory=Counter)
    examples: list[dict[str, str]] = field(default_factory=list)
    note: str = ""

    @property
    def rate(self) -> float:
        return self.dangling / self.answers if self.answers else 0.0

    @property
    def verdict(self) -> str:
        """``pass``, ``fail``, ``expected`` (attacker over the threshold) or ``reported``."""
        if not self.answers:
            return "fail"
        over = self.rate > self.threshold
        if self.role == "shipped":
            return "fail" if over else "pass"
        if self.role == "attacker":
            return "expected" if over else "fail"
        return "reported"

    @property
    def reason(self) -> str:
        if not self.answers:
            return self.note or f"no answer from {self.generator}: nothing was measured"
        share = f"{self.dangling}/{self.answers} answers"
        if self.role == "shipped":
            side = "above" if self.rate > self.threshold else "within"
            return f"{share}, {side} the threshold {self.threshold:.2f}"
        if self.role == "attacker":
            if self.rate > self.threshold:
                return f"{share}: the detector sees the adversary, as it must"
            return f"{share}: the adversary writes references, so the detector is blind"
        side = "above" if self.rate > self.threshold else "within"
        return f"{share}, {side} the threshold {self.threshold:.2f} (does not gate)"

    def as_dict(self) -> dict[str, Any]:
        return {
            "generator": self.generator,
            "role": self.role,
            "answers": self.answers,
            "dangling": self.dangling,
            "rate": self.rate,
            "references": self.references,
            "failed_requests": self.failed_requests,
            "by_rule": dict(sorted(self.by_rule.items())),
            "verdict": self.verdict,
            "reason": self.reason,
            "examples": self.examples,
        }


def rate_answers(
    generator: str,
    answers: Sequence[MemberAnswer],
    internal_titles: Iterable[str],
    role: str | None = None,
) -> GeneratorRate:
    """Count the member answers of ``generator`` that hold a dangling reference."""
    titles = list(internal_titles)
    result = GeneratorRate(generator, role or ROLES.get(generator, "shipped"))
    for answer in answers:
        if not answer.ok:
            result.failed_requests += 1
            continue
        result.answers += 1
        refs = dangling_references(answer.answer, titles, [answer.question])
        if not refs:
            continue
        result.dangling += 1
        result.references += len(refs)
        result.by_rule.update(r.rule for r in refs)
        if len(result.examples) < EXAMPLES_PER_GENERATOR:
            result.examples.append(
                {
                    "question": answer.question_id,
                    "rules": ", ".join(sorted({r.rule for r in refs})),
                    "first": refs[0].text[:80],
                }
            )
    return result


def unmeasured(generator: str, why: str) -> GeneratorRate:
    """A generator that could not run: it fails its role, and the report says why."""
    return GeneratorRate(generator, ROLES.get(generator, "shipped"), note=why)
