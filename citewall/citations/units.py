"""Sentence units: the units of a card as they are embedded, quoted and attributed.

A unit is a whole sentence of a paragraph or a whole list item of the card's text, with its
Markdown syntax removed (``outline``). Ingest embeds every unit of every chunk once
(``ingest.sentences``); the extractive generator quotes units and post-hoc attribution
compares answer sentences with them, both reading the stored vectors by the unit's text. One
function defines the text, so what ingest embedded is what a turn looks up.

>>> card_units("- **Refunds** take 5 days [2].\\n\\nAsk us.")
['Refunds take 5 days.', 'Ask us.']
"""

from __future__ import annotations

from citewall.citations.outline import outline


def card_units(text: str) -> list[str]:
    """The non-empty units of ``text``, in reading order (duplicates kept)."""
    return [u.text for u in outline(text).units]
