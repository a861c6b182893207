"""Answer quality: nugget recall, off-topic sentences and abstention, each with a control.

- **Nugget recall**: each test question has 1-3 short gold facts (``kb/eval/nuggets.*.jsonl``);
  a nugget counts when the answer states it. Only member-facing nuggets count: a line whose
  question has a playbook among its gold cards says per nugget (``audience``) whether the
  member may be told it (the card's reply or a public gold card states it) or it is staff-only
  (only the staff notes state it). A staff-only nugget stated to a member is a leak, counted
  apart (``staff_nuggets_leaked``). The judge is the citation-support judge
  (``support.SupportJudge``) reading the *answer* as the evidence and the nugget as the claim,
  with thresholds fitted on hand labels (``kb/eval/nugget_labels.jsonl``); its agreement with
  them is reported (fitted and leave-one-out).
- **Off-topic sentence rate**: of an answer's judgeable sentences, the share that no gold card
  of the question supports (the calibrated support judge, against each gold card): the
  sentence's best support is not a gold card. Judged against the gold cards, not the cited
  ones, so an extractive sentence copied from a neighbouring card counts as off topic unless a
  gold card states it too. Answers that abstained have no sentences here (nugget recall counts
  them as stating nothing).

Negative control: every answer scored against another question's nuggets and gold cards (the
answers are then fluent, cited and off the question: recall must fall and the off-topic rate
rise). Abstention is measured in ``abstention``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from citewall_evals.data import DEMO, QUESTIONS_DIR, Dataset, read_jsonl, require
from citewall_evals.quality.calibration import CalibrationResult, SupportLabel, calibrate
from citewall_evals.quality.citations import cited_sentences
from citewall_evals.quality.support import SupportJudge, judgeable
from citewall_evals.redteam.catalogue import KbCard

NUGGET_LABELS = QUESTIONS_DIR / "nugget_labels.jsonl"


#: Who may be told a nugget: the member (the card's reply or a public card states it), or staff
#: only (only a playbook's staff notes state it).
Audience = Literal["member", "staff"]
AUDIENCES: tuple[Audience, ...] = ("member", "staff")


def nugget_audiences(row: Mapping[str, Any]) -> tuple[Audience, ...]:
    """Each nugget's audience on a nuggets line (no ``audience`` field: all member-facing).
    ``ValueError`` for a list of another length or an unknown audience (``read_jsonl`` names
    the file and line).

    >>> nugget_audiences({"id": "q1", "nuggets": ["a", "b"], "audience": ["member", "staff"]})
    ('member', 'staff')
    >>> nugget_audiences({"id": "q1", "nuggets": ["a"]})
    ('member',)
    """
    nuggets = row["nuggets"]
    given = row.get("audience", ["member"] * len(nuggets))
    if not isinstance(given, list) or len(given) != len(nuggets):
        raise ValueError(f"{row['id']}: audience must list one of {AUDIENCES} per nugget")
    out: list[Audience] = []
    for value in given:
        if value not in AUDIENCES:
            raise ValueError(f"{row['id']}: audience {value!r} is not one of {AUDIENCES}")
        out.append("staff" if value == "staff" else "member")
    return tuple(out)


def load_nuggets(
    split: str, dataset: Dataset = DEMO, audience: Audience | None = "member"
) -> dict[str, tuple[str, ...]]:
    """Question id -> its gold facts for ``split``: the member-facing ones (the default), the
    staff-only ones, or all of them (``audience=None``)."""

    def row_nuggets(row: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
        pairs = zip(row["nuggets"], nugget_audiences(row), strict=True)
        return str(row["id"]), tuple(str(n) for n, a in pairs if audience in (None, a))

    return dict(
        read_jsonl(dataset.label_file("nuggets", split), "a question's nuggets", row_nuggets)
    )


@dataclass(frozen=True, slots=True)
class NuggetLabel:
    question_id: str
    nugget: str
    answer: str
    stated: bool


def load_nugget_labels() -> list[NuggetLabel]:
    return read_jsonl(
        require(NUGGET_LABELS),
        "a nugget label",
        lambda row: NuggetLabel(
            str(row["question_id"]), str(row["nugget"]), str(row["answer"]), bool(row["stated"])
        ),
    )


class NuggetJudge:
    """Does an answer state a nugget? The support judge with the answer as its evidence."""

    def __init__(self, embedder: Any) -> None:
        self._answers: dict[str, KbCard] = {}
        self.support = SupportJudge(embedder, self._answers)

    def _key(self, answer: str) -> str:
        key = f"answer:{len(self._answers)}"
        found = next((k for k, card in self._answers.items() if card.body == answer), None)
        if found is not None:
            return found
        # No title: the judge reads "<title>. <body>", so the key must not add words.
        self._answers[key] = KbCard(id=key, title="", body=answer, url=None)
        return key

    def calibrate(self, labels: Sequence[NuggetLabel]) -> CalibrationResult:
        """Fit the thresholds on hand labels; the agreement with them (fitted and LOO)."""
        pairs = [SupportLabel(lab.nugget, self._key(lab.answer), lab.stated) for lab in labels]
        return calibrate(self.support, pairs)

    def stated(self, nugget: str, answer: str) -> bool:
        return bool(answer.strip()) and self.support.supports(nugget, [self._key(answer)])


@dataclass(slots=True)
class AnswerQuality:
    """One generator's answer-quality counts over a question set."""

    nuggets: int = 0
    nuggets_stated: int = 0
    sentences: int = 0
    off_topic: int = 0
    answers: int = 0
    #: Staff-only nuggets of the questions, and those the member's answer states (leaks).
    staff_nuggets: int = 0
    staff_nuggets_leaked: int = 0
    examples_off_topic: list[str] = field(default_factory=list)

    @property
    def nugget_recall(self) -> float:
        return self.nuggets_stated / self.nuggets if self.nuggets else 0.0

    @property
    def off_topic_rate(self) -> float:
        return self.off_topic / self.sentences if self.sentences else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "answers": self.answers,
            "nuggets": self.nuggets,
            "nugget_recall": round(self.nugget_recall, 4),
            "sentences": self.sentences,
            "off_topic_rate": round(self.off_topic_rate, 4),
            "off_topic_examples": self.examples_off_topic[:5],
            "staff_nuggets": self.staff_nuggets,
            "staff_nuggets_leaked": self.staff_nuggets_leaked,
        }


@dataclass(frozen=True, slots=True)
class ScoredAnswer:
    """What answer quality reads of one answer: the member's prose, and the stored content
    (markers kept) when the stored turn was read and it answered."""

    question_id: str
    prose: str
    content: str | None = None


def off_topic_sentences(
    content: str, gold: Sequence[str], judge: SupportJudge
) -> tuple[int, list[str]]:
    """Judgeable sentences of ``content`` and those no gold card supports."""
    sentences = [s for s, _ in cited_sentences(content, ())[0]]
    judge.warm(gold, sentences)
    total, off = 0, []
    for sentence in sentences:
        if not judgeable(sentence):
            continue
        total += 1
        if not any(judge.supports(sentence, [g]) for g in gold):
            off.append(sentence.strip())
    return total, off


def score_answers(
    answers: Sequence[ScoredAnswer],
    nuggets: Mapping[str, Sequence[str]],
    gold: Mapping[str, Sequence[str]],
    nugget_judge: NuggetJudge,
    support_judge: SupportJudge,
    staff_nuggets: Mapping[str, Sequence[str]] | None = None,
) -> AnswerQuality:
    """Nugget recall over ``answers`` (prose) and the off-topic rate (stored content); the
    staff-only nuggets (``staff_nuggets``) the prose states are counted as leaks."""
    quality = AnswerQuality()
    for a in answers:
        quality.answers += 1
        for nugget in nuggets.get(a.question_id, ()):
            quality.nuggets += 1
            quality.nuggets_stated += nugget_judge.stated(nugget, a.prose)
        for nugget in (staff_nuggets or {}).get(a.question_id, ()):
            quality.staff_nuggets += 1
            quality.staff_nuggets_leaked += nugget_judge.stated(nugget, a.prose)
        if a.content is not None:
            total, off = off_topic_sentences(a.content, gold.get(a.question_id, ()), support_judge)
            quality.sentences += total
            quality.off_topic += len(off)
            quality.examples_off_topic.extend(off)
    return quality


def mismatched(answers: Sequence[ScoredAnswer]) -> list[ScoredAnswer]:
    """The negative control: each answer filed under the question half the list away."""
    shift = max(1, len(answers) // 2)
    ids = [a.question_id for a in answers]
    return [
        ScoredAnswer(ids[(i + shift) % len(ids)], a.prose, a.content) for i, a in enumerate(answers)
    ]
