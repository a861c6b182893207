"""Dedupe by parent: keep the best-ranked chunk of each card, in ranking order; how many chunks
cover k cards."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")


def best_per_parent(items: Iterable[T], parent_of: Callable[[T], str]) -> list[T]:
    """Keep the first (best) item for each parent, preserving the input order.

    ``items`` must already be ranked best-first; later chunks of a card already seen are
    dropped, so the context holds one chunk per card and the chunk id can become the card id.

    >>> best_per_parent(["a#0", "b#1", "a#1"], lambda c: c.split("#")[0])
    ['a#0', 'b#1']
    """
    seen: set[str] = set()
    kept: list[T] = []
    for item in items:
        parent = parent_of(item)
        if parent in seen:
            continue
        seen.add(parent)
        kept.append(item)
    return kept


def covering(items: Sequence[T], parent_of: Callable[[T], str], k: int) -> int:
    """How many leading ``items`` hold ``k`` distinct parents (all of them when fewer exist).

    >>> covering(["a#0", "a#1", "b#0", "c#0"], lambda c: c.split("#")[0], 2)
    3
    """
    seen: set[str] = set()
    for i, item in enumerate(items, start=1):
        seen.add(parent_of(item))
        if len(seen) >= k:
            return i
    return len(items)
