"""Stored sources a member may still be shown: those of cards their audiences allow today.

An answer's sources were retrieved for the member as they were then; a member who has since
left a group (a new sign-in without it, ``citewall users groups``) must not see that group's
cards again when the conversation is reloaded. ``current`` is what the catalogue says now
(``storage.cards.card_audiences``); a card no longer in it keeps the audiences stored with the
source, so a deleted restricted card stays restricted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from citewall.kb.audiences import CardFilter
from citewall.storage.sources import StoredSource


def stored_audiences(source: StoredSource) -> tuple[str, ...]:
    """The audiences a source's card had when the answer was made (``Card.full_metadata``)."""
    raw = source.metadata.get("audiences")
    if isinstance(raw, list):
        return tuple(str(g) for g in raw)
    return ()


def still_allowed(
    sources: Iterable[StoredSource],
    *,
    cards: CardFilter,
    current: Mapping[str, Sequence[str]],
) -> list[StoredSource]:
    """The sources whose card ``cards`` allows, by its audiences now (else as stored).

    >>> s = [StoredSource(n=1, card_id="a", title="A"),
    ...      StoredSource(n=2, card_id="b", title="B", metadata={"audiences": ["beta"]})]
    >>> [x.card_id for x in still_allowed(s, cards=CardFilter(frozenset()), current={})]
    ['a']
    >>> [x.card_id for x in still_allowed(s, cards=CardFilter(frozenset()), current={"b": []})]
    ['a', 'b']
    """
    if cards.everything:
        return list(sources)
    return [
        s
        for s in sources
        if cards.allows(current[s.card_id] if s.card_id in current else stored_audiences(s))
    ]
