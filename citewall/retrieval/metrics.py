"""Ranking metrics over card ids with binary relevance (gold = the cards that answer)."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence


def ndcg_at_k(ranked: Sequence[str], gold: Collection[str], k: int = 10) -> float:
    """nDCG@k with binary gains: DCG of ``ranked[:k]`` over the DCG of a perfect ranking.

    >>> ndcg_at_k(["a", "b"], {"a"})
    1.0
    """
    if not gold:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, c in enumerate(ranked[:k]) if c in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return dcg / ideal


def recall_at_k(ranked: Sequence[str], gold: Collection[str], k: int = 10) -> float:
    """Share of the gold cards found in the top k."""
    if not gold:
        return 0.0
    return len(set(ranked[:k]) & set(gold)) / len(set(gold))


def reciprocal_rank(ranked: Sequence[str], gold: Collection[str]) -> float:
    """1/rank of the first gold card (0 when none is ranked); its mean is MRR."""
    for i, c in enumerate(ranked, start=1):
        if c in gold:
            return 1.0 / i
    return 0.0
