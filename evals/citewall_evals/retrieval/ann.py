"""ANN recall: how much of an exact nearest-neighbour search the vector store's index finds."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

import numpy as np
import numpy.typing as npt

from citewall.kb.audiences import EVERY_CARD
from citewall.retrieval.protocols import VectorIndex
from citewall.retrieval.records import Vector
from citewall_evals.retrieval.metrics import CUTOFF


def ann_recall(
    index: VectorIndex,
    chunk_ids: Sequence[str],
    matrix: npt.NDArray[np.float32],
    queries: Sequence[Vector],
    k: int = CUTOFF,
) -> float:
    """Mean overlap of the index's top ``k`` with an exact dot-product top ``k`` over
    ``matrix`` (one unit vector per id in ``chunk_ids``, the vectors the index holds)."""
    if not queries or not len(chunk_ids):
        return 0.0
    ids = np.asarray(chunk_ids)
    depth = min(k, len(ids))
    overlaps = []
    for vec in queries:
        exact = set(ids[np.argsort(-(matrix @ vec), kind="stable")[:depth]].tolist())
        approx = {h.chunk_id for h in index.query(vec, k, cards=EVERY_CARD)}
        overlaps.append(len(exact & approx) / depth)
    return fmean(overlaps)
