"""Sentence units: the sentences of a card as they are embedded, quoted and attributed.

A unit is a sentence of the card's text (``split_sentences``) with its list bullet, ``[n]``
markers and emphasis marks removed. Ingest embeds every unit of every chunk once
(``ingest.sentences``); the extractive generator quotes units and post-hoc attribution
compares answer sentences with them, both reading the stored vectors by the unit's text. One
function defines the text, so what ingest embedded is what a turn looks up.

>>> card_units("- **Refunds** take 5 days [2].\\n\\nAsk us.")
['Refunds take 5 days.', 'Ask us.']
"""

from __future__ import annotations

import re

from citewall.citations.markers import strip_markers
from citewall.citations.sentences import split_sentences

_BULLET = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
_EMPHASIS = re.compile(r"[*_]{1,3}([^*_]+)[*_]{1,3}")


def unit_text(sentence: str) -> str:
    """One sentence as a unit: trimmed, without a list bullet, markers or emphasis marks."""
    s = _BULLET.sub("", sentence.strip())
    s = strip_markers(s).strip()
    return _EMPHASIS.sub(r"\1", s)


def card_units(text: str) -> list[str]:
    """The non-empty units of ``text``, in reading order (duplicates kept)."""
    return [u for u in (unit_text(s) for s in split_sentences(text)) if u]
