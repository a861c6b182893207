"""Does the answer open with the card retrieval ranked first? "First sentence from a gold card,
where a gold card is ranked first".

Of the answers whose top-ranked context card is a gold card (and that cite something), the
share whose first sentence cites a gold card. An answer built around the best card opens with
it; one that opens with a neighbouring card's sentence (an overage-fee sentence for "what
plans are there") does not, whatever it says later.

Negative control: the same answers with the first sentence taken from the lowest-ranked card
of the context (what an answerer that ignored retrieval's order could do): the rate must fall.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from citewall_evals.quality.citations import cited_sentences


@dataclass(frozen=True, slots=True)
class Opening:
    """One answer's opening as the metric reads it."""

    question_id: str
    #: The context's card ids, best-ranked first.
    ranking: tuple[str, ...]
    #: The first card the answer's first sentence cites (None: it abstained or cites nothing).
    first_card: str | None
    gold: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FirstSentence:
    eligible: int
    from_gold: int

    @property
    def rate(self) -> float:
        return self.from_gold / self.eligible if self.eligible else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"eligible": self.eligible, "from_gold": self.from_gold, "rate": round(self.rate, 4)}


def first_cited_card(content: str, sources: Iterable[Mapping[str, Any]]) -> str | None:
    """The first card cited by the first sentence of a stored answer (markers in content).

    >>> first_cited_card("Plans start at 9 USD [2]. Overage costs 1 USD [1].",
    ...                  [{"n": 1, "card_id": "fees"}, {"n": 2, "card_id": "plans"}])
    'plans'
    """
    pairs, _ = cited_sentences(content, sources)
    return pairs[0][1][0] if pairs and pairs[0][1] else None


def first_sentence_rate(openings: Sequence[Opening]) -> FirstSentence:
    """Among answers with a gold card ranked first, those whose first sentence cites gold."""
    eligible = [o for o in openings if o.ranking and o.ranking[0] in o.gold and o.first_card]
    return FirstSentence(len(eligible), sum(o.first_card in o.gold for o in eligible))


def from_lowest_ranked(openings: Sequence[Opening]) -> list[Opening]:
    """The negative control: each answer's first sentence taken from its lowest-ranked card."""
    return [replace(o, first_card=o.ranking[-1]) if o.first_card else o for o in openings]
