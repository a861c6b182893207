"""Staff-only text: the detector against its hand labels, and staff sentences in member prose.

Two figures, each beside a control that must score badly:

- **Detector** (``score_detector``): precision and recall of ``boundary.staff_only.judge`` on
  the held-out split of ``kb/eval/staff_labels.jsonl`` (tuned on ``dev`` only), with the KB's
  vocabulary as the runtime derives it. Control: a detector that flags sentences at random at
  the same rate (seeded), whose precision is the base rate and recall the flag rate. Also: how
  many sentences of the KB's public cards the detector flags (every one is member-safe).
- **Staff-only sentences in member prose** (``count_leaks``): the sentences of replayed member
  answers that repeat a labelled staff-only sentence (the same words, or ``NEAR_WORDS``
  consecutive words of it), unless the sentence is, word for word, a sentence of that
  playbook's member-facing reply (its author wrote it for the member, in words close to the
  staff note it stands for). The checked answers should hold none. Controls: the same questions
  answered with the check off (``CITEWALL_STAFF_ONLY_CHECK=false``), and the labelled staff-only
  sentences themselves served as member prose through the check switched off and on
  (``passthrough``: off, every one leaks).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citewall.boundary.staff_only import StaffVocabulary, judge
from citewall.chat.corpus_protection import apply_cap
from citewall.chat.staff_check import StaffFilter
from citewall.citations.outline import outline
from citewall.citations.sentences import split_sentences
from citewall.citations.verbatim import Words, longest_span, words
from citewall_evals.data import QUESTIONS_DIR, read_jsonl

STAFF_LABELS = QUESTIONS_DIR / "staff_labels.jsonl"
#: Consecutive words of a labelled sentence that make a member sentence a near copy of it.
NEAR_WORDS = 8
#: The control detector's seed (a fixed draw, so the figure is reproducible).
CONTROL_SEED = 29


@dataclass(frozen=True, slots=True)
class StaffLabel:
    """One hand-labelled sentence of an internal card."""

    card_id: str
    sentence: str
    staff_only: bool
    split: str


def _label(row: dict[str, Any]) -> StaffLabel:
    if row["label"] not in {"staff_only", "member_safe"} or row["split"] not in {"dev", "test"}:
        raise ValueError(f"label {row['label']!r} / split {row['split']!r}")
    return StaffLabel(
        str(row["card_id"]), str(row["sentence"]), row["label"] == "staff_only", str(row["split"])
    )


def load_staff_labels(path: Path = STAFF_LABELS) -> list[StaffLabel]:
    """The labelled sentences (``UserError`` naming the line for a bad row)."""
    return read_jsonl(path, "a staff label {card_id, sentence, label, split}", _label)


@dataclass(frozen=True, slots=True)
class Detection:
    """A detector's flags against the labels."""

    labelled: int
    staff_only: int
    flagged: int
    true_positives: int

    @property
    def precision(self) -> float:
        return self.true_positives / self.flagged if self.flagged else 0.0

    @property
    def recall(self) -> float:
        return self.true_positives / self.staff_only if self.staff_only else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "labelled": self.labelled,
            "staff_only": self.staff_only,
            "flagged": self.flagged,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
        }


def detection(labels: Sequence[StaffLabel], flags: Sequence[bool]) -> Detection:
    """Score ``flags`` (one per label) against the labels."""
    return Detection(
        labelled=len(labels),
        staff_only=sum(lab.staff_only for lab in labels),
        flagged=sum(flags),
        true_positives=sum(f and lab.staff_only for f, lab in zip(flags, labels, strict=True)),
    )


def random_flags(n: int, flagged: int, seed: int = CONTROL_SEED) -> list[bool]:
    """``flagged`` of ``n`` positions, drawn at random (the control detector)."""
    chosen = set(random.Random(seed).sample(range(n), min(flagged, n)))
    return [i in chosen for i in range(n)]


def score_detector(
    labels: Sequence[StaffLabel],
    vocabulary: StaffVocabulary,
    public_sentences: Sequence[str],
    split: str = "test",
) -> dict[str, Any]:
    """The detector and its random control on ``split``; public sentences it flags."""
    held = [lab for lab in labels if lab.split == split]
    flags = [judge(lab.sentence, vocabulary).staff_only for lab in held]
    real = detection(held, flags)
    control = detection(held, random_flags(len(held), real.flagged))
    public = sum(judge(s, vocabulary).staff_only for s in public_sentences)
    return {
        "split": split,
        **real.as_dict(),
        "control": control.as_dict(),
        "public_sentences": len(public_sentences),
        "public_flagged": public,
    }


@dataclass(frozen=True, slots=True)
class LeakCount:
    """Member-prose sentences that repeat a labelled staff-only sentence."""

    answers: int
    sentences: int
    leaked: int
    examples: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "answers": self.answers,
            "sentences": self.sentences,
            "leaked": self.leaked,
            "examples": list(self.examples),
        }


def repeats(sentence: Words, staff: Sequence[Words]) -> bool:
    """Does ``sentence`` repeat one of ``staff`` whole, or ``NEAR_WORDS`` words of one?

    >>> repeats(words("Escalate to Tier 2 now."), [words("Escalate to Tier 2 now.")])
    True
    """
    return any(longest_span(sentence, s) >= min(len(s), NEAR_WORDS) for s in staff if s)


def count_leaks(
    prose: Iterable[str],
    staff_labels: Sequence[StaffLabel],
    replies: Mapping[str, str] | None = None,
) -> LeakCount:
    """How many sentences of the member answers ``prose`` repeat a staff-only sentence of
    ``staff_labels`` (``replies``: card id -> reply; a sentence of the playbook's reply, word
    for word, is not counted for that playbook's staff sentences)."""
    staff: dict[str, list[Words]] = {}
    for label in staff_labels:
        staff.setdefault(label.card_id, []).append(words(label.sentence))
    approved = {
        card_id: {words(u.text) for u in outline(reply).units}
        for card_id, reply in (replies or {}).items()
    }
    answers = sentences = leaked = 0
    examples: list[str] = []
    for answer in prose:
        answers += 1
        for sentence in split_sentences(answer):
            sentences += 1
            said = words(sentence)
            if any(
                said not in approved.get(card_id, ()) and repeats(said, card_staff)
                for card_id, card_staff in staff.items()
            ):
                leaked += 1
                if len(examples) < 3:
                    examples.append(sentence)
    return LeakCount(answers, sentences, leaked, tuple(examples))


def passthrough(labels: Sequence[StaffLabel], vocabulary: StaffVocabulary | None) -> LeakCount:
    """The labelled staff-only sentences served as member prose, through the pipeline's
    sentence filter (``vocabulary=None``: the check off, every one goes out)."""
    staff = [lab for lab in labels if lab.staff_only]
    if vocabulary is None:
        served = [lab.sentence for lab in staff]
    else:
        served = [apply_cap(lab.sentence, StaffFilter(vocabulary).keep) for lab in staff]
    return count_leaks(served, staff)
