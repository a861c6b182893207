"""Follow-up retrieval: nDCG@10 and recall@5 of a follow-up retrieved with the conversation,
alone, and the first question's own, on labelled two-turn conversations.

``kb/eval/followups.{dev,test}.jsonl`` (the demo KB; ``kb/eval/<kb>/`` for the others):
``{"id", "first", "first_gold", "followup", "gold", "kind"}``; ``kind`` is ``followup``
(ambiguous alone) or ``switch`` (a new self-contained question, which the follow-up handling
must not hurt). Queries are made by the production ``Condenser`` and ranked by the production
``retrieve``; recall@5 is whether the gold cards reach the answer's context (``context_k``).

Negative control: ``MismatchedCondenser`` condenses each follow-up with the first question of
another conversation (the rule, fed the wrong history); its nDCG must fall well below the
real context's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import mean
from typing import Any

from citewall.generation.followup import Condensed, Condenser, RuleCondenser
from citewall.generation.protocols import Turn
from citewall.kb.audiences import EVERY_CARD
from citewall.retrieval.protocols import Retriever
from citewall_evals.data import DEMO, Dataset, read_jsonl
from citewall_evals.retrieval.metrics import CUTOFF, ndcg_at_k, recall_at_k


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


#: recall@ this many cards: the context the answer is written from.
RECALL_K = 5


@dataclass(frozen=True, slots=True)
class Score:
    """Mean nDCG@10 and recall@5 over a set of conversations."""

    ndcg: float
    recall: float


@dataclass(frozen=True, slots=True)
class FollowUpScores:
    """Scores per way of retrieving, over the follow-ups and over the switches."""

    followups: int
    switches: int
    first: Score
    alone: Score
    context: Score
    control: Score
    switch_alone: Score
    switch_context: Score
    condensed: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"followups": self.followups, "switches": self.switches}
        for name in ("first", "alone", "context", "control", "switch_alone", "switch_context"):
            score: Score = getattr(self, name)
            out[f"{name}_ndcg"] = round(score.ndcg, 4)
            out[f"{name}_recall5"] = round(score.recall, 4)
        first, context = self.first.ndcg, self.context.ndcg
        out["context_vs_first"] = round(context / first, 4) if first else None
        out["context_minus_alone"] = round(context - self.alone.ndcg, 4)
        out["condense_methods"] = dict(sorted(self.condensed.items()))
        return out


def _score(retriever: Retriever, pairs: Sequence[tuple[str, Sequence[str]]]) -> Score:
    """Mean nDCG@10 and recall@5 of each query's ranking against its gold cards."""
    if not pairs:
        return Score(0.0, 0.0)
    rankings = [
        [c.id for c in retriever.retrieve(q, k=CUTOFF, cards=EVERY_CARD).chunks] for q, _ in pairs
    ]
    return Score(
        mean(ndcg_at_k(r, g) for r, (_, g) in zip(rankings, pairs, strict=True)),
        mean(recall_at_k(r, g, RECALL_K) for r, (_, g) in zip(rankings, pairs, strict=True)),
    )


def score_followups(
    retriever: Retriever, condenser: Condenser, items: Sequence[FollowUp]
) -> FollowUpScores:
    """Retrieve every conversation's second message four ways and score each against gold."""
    follow = [i for i in items if i.kind == "followup"]
    switch = [i for i in items if i.kind == "switch"]
    control = MismatchedCondenser(items)
    methods: dict[str, int] = {}

    def with_context(group: Sequence[FollowUp], c: Condenser) -> Score:
        pairs = []
        for i in group:
            condensed = c.condense(i.followup, i.history)
            if c is condenser:
                methods[condensed.method] = methods.get(condensed.method, 0) + 1
            pairs.append((condensed.query, i.gold))
        return _score(retriever, pairs)

    return FollowUpScores(
        followups=len(follow),
        switches=len(switch),
        first=_score(retriever, [(i.first, i.first_gold) for i in follow]),
        alone=_score(retriever, [(i.followup, i.gold) for i in follow]),
        context=with_context(follow, condenser),
        control=with_context(follow, control),
        switch_alone=_score(retriever, [(i.followup, i.gold) for i in switch]),
        switch_context=with_context(switch, condenser),
        condensed=methods,
    )
