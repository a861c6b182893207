"""Who may know what: a card's audiences, a reader's groups, and THE rule between them.

A card may name ``audiences``: the groups of members it is meant for. A card without any is
for every member. Audience is independent of visibility (external or internal, ``Card.url``):
an external card restricted to ``enterprise`` is linked in the sources of enterprise members
only, an internal card restricted to ``partners`` informs partners' answers only.

``retrievable_for`` is the one function that decides which cards a reader may retrieve
(docs/audiences.md). Every retrieval call takes the ``CardFilter`` it returns, and every
index applies it before anything is ranked: a card outside the reader's audiences never enters
a candidate list, a context, a prompt or a retrieval event of theirs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

#: A group name: lower-case letters, digits, ``-`` and ``_``, starting with a letter or digit.
AUDIENCE_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def audience_problem(name: object) -> str | None:
    """Why ``name`` cannot be a group name, or None.

    >>> audience_problem("enterprise") is None
    True
    >>> audience_problem("Enterprise Plan").split(":")[0]
    "'Enterprise Plan' is not a group name"
    """
    if isinstance(name, str) and AUDIENCE_PATTERN.fullmatch(name):
        return None
    return (
        f"{name!r} is not a group name: use lower-case letters, digits, '-' and '_' "
        "(at most 64, starting with a letter or digit)"
    )


def audience_names(raw: object) -> tuple[str, ...]:
    """A list of group names (or one name) as a sorted tuple without duplicates; ValueError
    naming the first bad one.

    >>> audience_names(["partners", "enterprise", "partners"])
    ('enterprise', 'partners')
    >>> audience_names("beta")
    ('beta',)
    """
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list | tuple):
        raise ValueError(f"must be a list of group names, got {type(raw).__name__}")
    for item in items:
        if problem := audience_problem(item):
            raise ValueError(problem)
    return tuple(sorted(set(items)))


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who retrieval runs for: a member and their groups, or staff (admins, ingest, evaluation),
    who see every card. Built once per request from the signed-in user and carried through the
    turn to retrieval."""

    groups: frozenset[str] = frozenset()
    sees_everything: bool = False

    @classmethod
    def member(cls, groups: Iterable[str]) -> Viewer:
        return cls(groups=frozenset(groups))

    @classmethod
    def staff(cls) -> Viewer:
        return cls(sees_everything=True)


@dataclass(frozen=True, slots=True)
class CardFilter:
    """Which cards a retrieval may consider: ``groups=None`` is every card; otherwise a card
    with no audiences, or one sharing a group with ``groups``. Indexes translate it into their
    own pre-filter (a Chroma ``where``, a BM25 weight mask)."""

    groups: frozenset[str] | None

    @property
    def everything(self) -> bool:
        return self.groups is None

    def allows(self, audiences: Iterable[str]) -> bool:
        """Whether a card with ``audiences`` may be retrieved.

        >>> f = CardFilter(frozenset({"enterprise"}))
        >>> f.allows(()), f.allows(["enterprise", "beta"]), f.allows(["partners"])
        (True, True, False)
        """
        if self.groups is None:
            return True
        names = tuple(audiences)
        return not names or not self.groups.isdisjoint(names)


def retrievable_for(viewer: Viewer) -> CardFilter:
    """THE rule: what ``viewer`` may retrieve. Staff: every card. A member: the cards without
    audiences and those whose audiences include one of the member's groups.

    >>> retrievable_for(Viewer.staff()).everything
    True
    >>> retrievable_for(Viewer.member(["enterprise"])).allows(["partners"])
    False
    >>> retrievable_for(Viewer.member([])).allows([])
    True
    """
    if viewer.sees_everything:
        return CardFilter(groups=None)
    return CardFilter(groups=frozenset(viewer.groups))


#: Every card: what staff-side retrieval (ingest's calibration, evaluation) runs with.
EVERY_CARD = retrievable_for(Viewer.staff())
