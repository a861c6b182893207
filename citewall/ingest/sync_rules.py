"""The rules of a sync, as pure functions: how often a source is synced, when a sync is held
for an admin to confirm, and which unreadable pages have become stale."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from citewall.errors import UserError

_EVERY = re.compile(r"(\d+)([mhd])")
_UNIT_S = {"m": 60, "h": 3600, "d": 86400}
#: A schedule shorter than this would crawl a help center faster than any team edits one.
MIN_EVERY_S = 300


def parse_every(text: str) -> int:
    """``--every`` as seconds: a number and a unit (``m``, ``h``, ``d``), or several (``1d12h``).

    >>> parse_every("6h"), parse_every("1d"), parse_every("1h30m")
    (21600, 86400, 5400)
    """
    value = text.strip().lower()
    parts = _EVERY.findall(value)
    if not value or "".join(n + u for n, u in parts) != value:
        raise UserError(f"--every {text!r} is not a duration: write it as 30m, 6h, 1d or 1d12h")
    seconds = sum(int(n) * _UNIT_S[u] for n, u in parts)
    if seconds < MIN_EVERY_S:
        raise UserError(f"--every {text!r} is shorter than the shortest schedule, 5m")
    return seconds


def held_reason(stored: int, listed: int) -> str | None:
    """Why a sync must not be applied without an admin's confirmation, or None.

    ``stored``: the cards the source has in the KB now; ``listed``: the pages (or cards) it
    lists now. A source that comes back empty, or with fewer than half of what it had, is more
    often a broken deploy of the help center than a real change, and applying it would empty
    the KB.

    >>> held_reason(10, 4)
    'the source lists 4 where the KB has 10 of its cards (fewer than half): not applied'
    >>> held_reason(10, 5) is None, held_reason(0, 0) is None
    (True, True)
    """
    if stored > 0 and listed == 0:
        return f"the source lists nothing where the KB has {stored} of its cards: not applied"
    if listed * 2 < stored:
        return (
            f"the source lists {listed} where the KB has {stored} of its cards "
            "(fewer than half): not applied"
        )
    return None


def failing_after(before: Mapping[str, int], unreadable: Iterable[str]) -> dict[str, int]:
    """Each page's count of syncs in a row that could not read it: one more for the pages this
    sync could not read; a page it read, found gone or no longer found listed starts again.

    >>> failing_after({"a": 2, "b": 1}, ["a", "c"])
    {'a': 3, 'c': 1}
    """
    return {url: before.get(url, 0) + 1 for url in sorted(set(unreadable))}


def stale_pages(failing: Mapping[str, int], after: int) -> list[str]:
    """The pages that could not be read for ``after`` syncs in a row.

    >>> stale_pages({"a": 3, "b": 1}, 3)
    ['a']
    """
    return sorted(url for url, count in failing.items() if count >= after)
