"""The red-team corpus: direct injections (questions) and indirect ones (hostile KB cards).

Direct cases are written for the project in ``kb/redteam/questions.jsonl``
(``{"id", "technique", "question"}``). Indirect cases are derived from
``kb/hostile/cards.jsonl``: one question per hostile card, worded from its title so retrieval
puts the card (and the injection in its body) in front of the generator; the runner records
whether it really was retrieved.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from citewall.evals.catalogue import CatalogueError, KbCard, bare_title


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
    if not path.is_file():
        raise CatalogueError(f"{path}: red-team questions not found")
    cases: list[RedteamCase] = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            cases.append(
                RedteamCase(
                    id=str(row["id"]),
                    kind="direct",
                    technique=str(row.get("technique", "direct")),
                    question=str(row["question"]),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise CatalogueError(f"{path}:{lineno}: not a red-team case ({exc})") from None
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise CatalogueError(f"{path}: duplicate case ids")
    return cases


def indirect_cases(hostile: Sequence[KbCard]) -> list[RedteamCase]:
    """One question per hostile card, asked in the words of its title."""
    cases: list[RedteamCase] = []
    for card in hostile:
        topic = bare_title(card.title).rstrip(".?!")
        question = f"{topic}? What should I do?"
        technique = str(card.metadata.get("attack") or card.metadata.get("technique") or "indirect")
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


def fast_subset(cases: Sequence[RedteamCase], per_technique: int = 1) -> list[RedteamCase]:
    """A few cases of every technique (and every indirect card): the test command's gate."""
    seen: dict[tuple[str, str], int] = {}
    out: list[RedteamCase] = []
    for case in cases:
        key = (case.kind, case.technique if case.kind == "direct" else case.id)
        if seen.get(key, 0) < per_technique:
            seen[key] = seen.get(key, 0) + 1
            out.append(case)
    return out
