"""Weighted reciprocal-rank fusion (RRF) of several rankings into one.

RRF is from Cormack, Clarke & Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and
individual Rank Learning Methods", SIGIR 2009. Each ranking contributes ``w / (k + rank)`` for
every item it ranks (rank is 1-based). It needs no score calibration between retrievers, which
is why it suits fusing a cosine similarity with a BM25 score: only positions matter.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def rrf(
    rankings: Sequence[Sequence[str]],
    k: int = 60,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Fuse ``rankings`` (each best-first, ids unique within a ranking) into ``(id, score)`` pairs.

    ``k`` damps the advantage of the very top ranks: with k=60 (the paper's value, found
    robust across TREC collections) rank 1 scores 1/61 and rank 10 scores 1/70, so agreement
    between retrievers outweighs one retriever's strong opinion. A small k trusts the head of
    each list more. ``weights`` (one per ranking, default all 1.0) scale each ranking's
    contribution; a weight of 0 silences that ranking (items only it lists keep a score of
    0.0 and sort last).

    Ties are broken deterministically: higher score first, then the best (lowest) rank the item
    reached in any ranking, then the id.

    >>> rrf([["a", "b"], ["b", "c"]], k=60)[0][0]
    'b'
    """
    if k < 1:
        raise ValueError(f"rrf k must be >= 1, got {k}")
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(f"got {len(weights)} weights for {len(rankings)} rankings")
    parts: dict[str, list[float]] = {}
    best_rank: dict[str, int] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        if weight < 0:
            raise ValueError(f"rrf weights must be >= 0, got {weight}")
        seen: set[str] = set()
        for position, item in enumerate(ranking, start=1):
            if item in seen:  # a duplicate within one ranking counts once, at its best rank
                continue
            seen.add(item)
            parts.setdefault(item, []).append(weight / (k + position))
            best_rank[item] = min(best_rank.get(item, position), position)
    # fsum is exact, so a score (and so the order) does not depend on the rankings' order.
    scores = {item: math.fsum(p) for item, p in parts.items()}
    return sorted(scores.items(), key=lambda kv: (-kv[1], best_rank[kv[0]], kv[0]))
