"""Does the knowledge base cover a question, and was a covered question answered badly?

The knowledge-gaps report keeps two lists apart (``storage.gaps``):

- a **gap** is a question the knowledge base does not cover: the answer was ``not_found``, or
  it was answered although no retrieved card holds enough of the question's content terms
  (``coverage`` below ``min_coverage``) *and* its support (the best dense similarity of the
  query to a retrieved chunk) is below ``low_support``: the answer was built from a card about
  something else. These are the articles to write.
- **answered badly** is a covered question answered wrongly: a member rated the answer "Not
  helpful", or its support is below ``low_support``. The knowledge base has the words; the
  answer missed them. These are cards to fix, or retrieval to look at, not articles to write.

Either signal alone lists too many covered questions as gaps: of the demo's 136 answerable
test questions, coverage alone listed 99 as gaps, low support alone (the report's earlier rule)
13, both together 11 (``benchmarks/gaps.py``; docs/evaluation.md, "Knowledge gaps").

``coverage`` is per card, unlike the answerability signal (``answerability.measure``, the
terms of the top cards taken together): a question whose terms are spread over three unrelated
cards is still not covered by any of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Literal, Protocol

from citewall.text.terms import content_terms

Verdict = Literal["gap", "answered_badly"]
#: Why a question is listed: the first two make a gap, the last two an answer gone wrong.
Reason = Literal["not_found", "low_coverage", "rated_down", "low_support"]
VERDICT: dict[Reason, Verdict] = {
    "not_found": "gap",
    "low_coverage": "gap",
    "rated_down": "answered_badly",
    "low_support": "answered_badly",
}


def coverage(question: str, cards: Iterable[AbstractSet[str]]) -> float:
    """The largest share of ``question``'s content terms that one of ``cards`` (each card's
    content terms, ``text.terms.content_terms`` of its title and body) holds; 0.0 for no card,
    1.0 for a question without content terms.

    >>> cards = [frozenset(content_terms(t)) for t in ("We ship to Canada.", "Phone: weekdays")]
    >>> coverage("do you ship to Canada?", cards)
    1.0
    >>> coverage("phone hours on saturday?", cards)
    0.3333333333333333
    """
    terms = content_terms(question)
    if not terms:
        return 1.0
    return max((len(terms & card) / len(terms) for card in cards), default=0.0)


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    """What the report knows of one answered question."""

    answer_status: str
    #: Best dense similarity of the query to a retrieved chunk (``messages.support``).
    support: float | None
    #: ``coverage`` of the question by the cards retrieved for it.
    coverage: float
    #: The member's rating, if any (``up`` or ``down``).
    rating: str | None = None


class TurnRule(Protocol):
    """Why a turn is listed, or None (``GapRule``; a measurement's control is another)."""

    def reason(self, turn: TurnOutcome) -> Reason | None: ...


@dataclass(frozen=True, slots=True)
class GapRule:
    """The thresholds of the classification (``Settings.knowledge_gap_*``)."""

    min_coverage: float
    low_support: float

    def reason(self, turn: TurnOutcome) -> Reason | None:
        """Why ``turn`` is listed (``VERDICT`` says in which list), or None for a covered
        question answered well. A gap wins over a bad answer: an answer to a question the
        knowledge base does not cover cannot be fixed by editing a card.

        >>> rule = GapRule(min_coverage=0.6, low_support=0.5)
        >>> rule.reason(TurnOutcome("not_found", 0.3, 0.9))
        'not_found'
        >>> rule.reason(TurnOutcome("answered", 0.4, 0.2, rating="down"))
        'low_coverage'
        >>> rule.reason(TurnOutcome("answered", 0.7, 0.2, rating="down"))
        'rated_down'
        >>> rule.reason(TurnOutcome("answered", 0.4, 0.9))
        'low_support'
        >>> rule.reason(TurnOutcome("answered", 0.7, 0.2)) is None
        True
        """
        if turn.answer_status == "not_found":
            return "not_found"
        low_support = turn.support is not None and turn.support < self.low_support
        if low_support and turn.coverage < self.min_coverage:
            return "low_coverage"
        if turn.rating == "down":
            return "rated_down"
        if low_support:
            return "low_support"
        return None

    def classify(self, turn: TurnOutcome) -> Verdict | None:
        """``gap``, ``answered_badly`` or None (see ``reason``)."""
        reason = self.reason(turn)
        return None if reason is None else VERDICT[reason]
