"""Follow-up retrieval: nDCG@10 of a follow-up retrieved with the conversation, alone, and
the first question's own, on labelled two-turn conversations.

``kb/eval/followups.{dev,test}.jsonl``: ``{"id", "first", "first_gold", "followup", "gold",
"kind"}``; ``kind`` is ``followup`` (ambiguous alone) or ``switch`` (a new self-contained
question, which the follow-up handling must not hurt). Queries are made by the production
``Condenser`` and ranked by the production ``retrieve``.

Negative control: ``MismatchedCondenser`` condenses each follow-up with the first question of
another conversation (the rule, fed the wrong history); its nDCG must fall well below the
real context's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import mean
from typing import Any

from citewall.evals.data import DEMO, Dataset, read_jsonl
from citewall.evals.retrieval.metrics import CUTOFF, ndcg_at_k
from citewall.generation.followup import Condensed, Condenser, RuleCondenser
from citewall.generation.protocols import Turn
from citewall.retrieval.protocols import Retriever


@dataclass(frozen=True, slots=True)
class FollowUp:
    id: str
    first: str
    first_gold: tuple[str, ...]
    followup: str
    gold: tuple[str, ...]
    kind: str

    @property
    def history(self) -> tuple[Turn, ...]:
        return (Turn("user", self.first),)


def _followup(row: dict[str, Any]) -> FollowUp:
    kind = str(row["kind"])
    if kind not in {"followup", "switch"}:
        raise ValueError(f"kind must be followup or switch, not {kind!r}")
    return FollowUp(
        id=str(row["id"]),
        first=str(row["first"]),
        first_gold=tuple(str(g) for g in row["first_gold"]),
        followup=str(row["followup"]),
        gold=tuple(str(g) for g in row["gold"]),
        kind=kind,
    )


def load_followups(split: str, dataset: Dataset = DEMO) -> list[FollowUp]:
    """The labelled conversations of ``split`` (``dev`` or ``test``)."""
    path = dataset.label_file("followups", split)
    return read_jsonl(path, "a labelled follow-up conversation", _followup)


class MismatchedCondenser:
    """The negative control: the rule, given the first question of another conversation."""

    def __init__(self, items: Sequence[FollowUp]) -> None:
        firsts = [i.first for i in items]
        # Rotate by half the list: every follow-up gets a first question from elsewhere.
        shift = max(1, len(firsts) // 2)
        self._other = {i.followup: firsts[(n + shift) % len(firsts)] for n, i in enumerate(items)}
        self._rule = RuleCondenser()

    def condense(self, question: str, history: Sequence[Turn]) -> Condensed:
        other = self._other.get(question)
        return self._rule.condense(question, [Turn("user", other)] if other else history)


@dataclass(frozen=True, slots=True)
class FollowUpScores:
    """Mean nDCG@10 per way of retrieving, over the follow-ups and over the switches."""

    followups: int
    switches: int
    first: float
    alone: float
    context: float
    control: float
    switch_alone: float
    switch_context: float
    condensed: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return {
            "followups": self.followups,
            "switches": self.switches,
            "first_ndcg": round(self.first, 4),
            "alone_ndcg": round(self.alone, 4),
            "context_ndcg": round(self.context, 4),
            "control_ndcg": round(self.control, 4),
            "context_vs_first": round(self.context / self.first, 4) if self.first else None,
            "context_minus_alone": round(self.context - self.alone, 4),
            "switch_alone_ndcg": round(self.switch_alone, 4),
            "switch_context_ndcg": round(self.switch_context, 4),
            "condense_methods": dict(sorted(self.condensed.items())),
        }


def _ndcg(retriever: Retriever, query: str, gold: Sequence[str]) -> float:
    ranking = [c.id for c in retriever.retrieve(query, k=CUTOFF).chunks]
    return ndcg_at_k(ranking, gold)


def score_followups(
    retriever: Retriever, condenser: Condenser, items: Sequence[FollowUp]
) -> FollowUpScores:
    """Retrieve every conversation's second message four ways and score each against gold."""
    follow = [i for i in items if i.kind == "followup"]
    switch = [i for i in items if i.kind == "switch"]
    control = MismatchedCondenser(items)
    methods: dict[str, int] = {}

    def with_context(i: FollowUp, c: Condenser) -> float:
        condensed = c.condense(i.followup, i.history)
        if c is condenser:
            methods[condensed.method] = methods.get(condensed.method, 0) + 1
        return _ndcg(retriever, condensed.query, i.gold)

    def avg(values: list[float]) -> float:
        return mean(values) if values else 0.0

    return FollowUpScores(
        followups=len(follow),
        switches=len(switch),
        first=avg([_ndcg(retriever, i.first, i.first_gold) for i in follow]),
        alone=avg([_ndcg(retriever, i.followup, i.gold) for i in follow]),
        context=avg([with_context(i, condenser) for i in follow]),
        control=avg([with_context(i, control) for i in follow]),
        switch_alone=avg([_ndcg(retriever, i.followup, i.gold) for i in switch]),
        switch_context=avg([with_context(i, condenser) for i in switch]),
        condensed=methods,
    )
