"""The labelled questions every measurement uses, and their one loader.

A labelled split is JSONL, one ``{"id", "question", "gold": [card ids], "kind"}`` per line
(``kind``: external, internal or mixed: which cards answer it). ``gold`` may be empty for a
question the KB cannot answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from citewall_evals.data import DEMO, Dataset, read_jsonl, split_path


class Asked(Protocol):
    """Anything asked as a member: a labelled question or a red-team case."""

    @property
    def id(self) -> str: ...

    @property
    def question(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Question:
    """One labelled question: its text and the cards that answer it."""

    id: str
    question: str
    gold: tuple[str, ...]
    kind: str = ""


def load_questions(path: Path) -> list[Question]:
    """Every question of a labelled split; a bad line raises ``UserError`` naming file and line
    (a missing file too: the labelled data ships with a source checkout)."""
    return read_jsonl(path, "a labelled question", _question)


def _question(row: dict[str, Any]) -> Question:
    return Question(
        id=str(row["id"]),
        question=str(row["question"]),
        gold=tuple(str(g) for g in row.get("gold") or ()),
        kind=str(row.get("kind", "")),
    )


def labelled_split(split: str, dataset: Dataset = DEMO) -> list[Question]:
    """The questions of ``split`` (``test`` or ``dev``) that have gold cards."""
    return [q for q in load_questions(split_path(split, dataset)) if q.gold]


def stratified(questions: Sequence[Question], n: int) -> list[Question]:
    """Up to ``n`` questions, round-robin over kinds, in file order (deterministic).

    >>> qs = [Question("a", "?", (), "x"), Question("b", "?", (), "x"), Question("c", "?", (), "y")]
    >>> [q.id for q in stratified(qs, 2)]
    ['a', 'c']
    """
    by_kind: dict[str, list[Question]] = {}
    for q in questions:
        by_kind.setdefault(q.kind, []).append(q)
    out: list[Question] = []
    while len(out) < n and any(by_kind.values()):
        for kind in sorted(by_kind):
            if by_kind[kind] and len(out) < n:
                out.append(by_kind[kind].pop(0))
    return out
