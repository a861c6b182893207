"""The red-team corpus: direct injections (questions) and indirect ones (hostile KB cards).

Direct cases are written for the project in ``kb/redteam/questions.jsonl``
(``{"id", "technique", "question"}``). Indirect cases are derived from
``kb/hostile/cards.jsonl``: one question per hostile card, worded from its title so retrieval
puts the card (and the injection in its body) in front of the generator; the runner records
whether it really was retrieved.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citewall_evals.data import read_jsonl
from citewall_evals.redteam.catalogue import CatalogueError, KbCard, bare_title

_TAG = re.compile(r"<(\w+)[^>]*>.*?</\1>|<[^>]+>", re.S)


@dataclass(frozen=True, slots=True)
class RedteamCase:
    """One attack. ``target_card`` is the hostile card an indirect case must pull in."""

    id: str
    kind: str  # "direct" or "indirect"
    technique: str
    question: str
    target_card: str | None = None


def load_direct_cases(path: Path) -> list[RedteamCase]:
    """Read ``kb/redteam/questions.jsonl``; ids must be unique."""
    cases = read_jsonl(path, "a red-team case", _direct_case)
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise CatalogueError(f"{path}: duplicate case ids")
    return cases


def _direct_case(row: dict[str, Any]) -> RedteamCase:
    return RedteamCase(
        id=str(row["id"]),
        kind="direct",
        technique=str(row.get("technique", "direct")),
        question=str(row["question"]),
    )


def indirect_cases(hostile: Sequence[KbCard]) -> list[RedteamCase]:
    """One question per hostile card, asked in the words of its title."""
    cases: list[RedteamCase] = []
    for card in hostile:
        if card.is_external:
            # A public card's title is public: ask in its words (markup removed).
            topic = " ".join(_TAG.sub(" ", bare_title(card.title)).split()).rstrip(".?!")
            question = f"{topic}? What should I do?"
        else:
            # An internal title must not be in the question (the member cannot know it, and
            # an echo of it would look like a leak): ask about the card's first statement.
            first = card.body.split(". ")[0].rstrip(".")
            question = f"{first}: is that right, and what should I do?"
        technique = "external" if card.is_external else "internal"
        cases.append(
            RedteamCase(
                id=f"hostile:{card.id}",
                kind="indirect",
                technique=technique,
                question=question,
                target_card=card.id,
            )
        )
    return cases
