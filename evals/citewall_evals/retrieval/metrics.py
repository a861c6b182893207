"""Ranking metrics over card ids with binary relevance (gold = the cards that answer).

Rankings are card ids, best first, already deduplicated by card.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

#: The cutoff every reported metric uses.
CUTOFF = 10


def ndcg_at_k(ranking: Sequence[str], relevant: Iterable[str], k: int = CUTOFF) -> float:
    """DCG of ``ranking[:k]`` (binary gains) over the DCG of a perfect ranking; 0.0 when
    nothing is relevant.

    >>> ndcg_at_k(["a", "b"], {"a"})
    1.0
    >>> round(ndcg_at_k(["b", "a"], {"a"}), 4)
    0.6309
    """
    rel = frozenset(relevant)
    if not rel:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, cid in enumerate(ranking[:k]) if cid in rel)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(rel), k)))
    return dcg / ideal


def recall_at_k(ranking: Sequence[str], relevant: Iterable[str], k: int = CUTOFF) -> float:
    """Share of the relevant ids found in the top ``k``; 0.0 when nothing is relevant."""
    rel = frozenset(relevant)
    if not rel:
        return 0.0
    return len(rel & set(ranking[:k])) / len(rel)


def reciprocal_rank(ranking: Sequence[str], relevant: Iterable[str]) -> float:
    """1/rank of the first relevant id (0.0 when none is ranked); its mean is MRR."""
    rel = frozenset(relevant)
    for i, cid in enumerate(ranking):
        if cid in rel:
            return 1.0 / (i + 1)
    return 0.0


def hit_at_k(ranking: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """1.0 when some relevant id is in the top ``k``, else 0.0; its mean is hit@k (the share of
    questions answered by one of the first ``k`` cards).

    >>> hit_at_k(["b", "a"], {"a"}, 1), hit_at_k(["b", "a"], {"a"}, 5)
    (0.0, 1.0)
    """
    rel = frozenset(relevant)
    return 1.0 if rel & set(ranking[:k]) else 0.0


@dataclass(frozen=True, slots=True)
class PathScores:
    """Mean metrics of one ranking method over a split; ``label`` is what really ran."""

    path: str
    ndcg_at_10: float
    recall_at_10: float
    mrr: float
    questions: int
    label: str = ""
    hit_at_1: float = 0.0
    hit_at_5: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "ndcg@10": self.ndcg_at_10,
            "recall@10": self.recall_at_10,
            "mrr": self.mrr,
            "hit@1": self.hit_at_1,
            "hit@5": self.hit_at_5,
            "questions": self.questions,
            "label": self.label,
        }


def score_rankings(
    path: str,
    rankings: Sequence[Sequence[str]],
    golds: Sequence[Iterable[str]],
    label: str = "",
) -> PathScores:
    """Mean nDCG@10, recall@10, MRR, hit@1 and hit@5 of ``rankings[i]`` against ``golds[i]``."""
    if len(rankings) != len(golds):
        raise ValueError(f"{len(rankings)} rankings for {len(golds)} gold lists")
    pairs = list(zip(rankings, [frozenset(g) for g in golds], strict=True))
    if not pairs:
        return PathScores(path, 0.0, 0.0, 0.0, 0, label or path)
    return PathScores(
        path=path,
        ndcg_at_10=fmean(ndcg_at_k(r, g) for r, g in pairs),
        recall_at_10=fmean(recall_at_k(r, g) for r, g in pairs),
        mrr=fmean(reciprocal_rank(r, g) for r, g in pairs),
        questions=len(pairs),
        label=label or path,
        hit_at_1=fmean(hit_at_k(r, g, 1) for r, g in pairs),
        hit_at_5=fmean(hit_at_k(r, g, 5) for r, g in pairs),
    )
