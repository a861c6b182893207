"""Whether the retrieved context can answer the question: measured signals, fitted thresholds.

Three signals, all cheap (no model call; the dense scores come with retrieval):

- ``dense``: the best cosine similarity between the query and any chunk (dense retrieval's
  first hit, ``RetrievedContext.top_dense``; computed by retrieval anyway, and unaffected by
  what a reranker later keeps);
- ``coverage``: the share of the query's content terms (stemmed, stopwords dropped) that occur
  in the top ``COVERAGE_CARDS`` retrieved cards;
- ``key_coverage``: the share of the query's KEY terms that occur in the best card. Key terms
  are the ones that name what is asked for: a number, a capitalised word inside the sentence
  (a name, a product, a country), or a word the knowledge base rarely or never uses (it is not
  among the KB's common terms, ``Vocabulary.common``). "Do you ship to Germany?" keeps
  "germani" uncovered on a KB that ships to the United States and Canada, though the dense
  score of the shipping card is high. A question with no key term has key coverage 1.0.

The question is answerable when every signal reaches its threshold. The thresholds are fitted
on each knowledge base at ingest (``retrieval.calibration``, whose docstring gives each
signal's measured AUC); the settings' thresholds apply when no calibration is stored, or win
when an operator sets them. Reranker logits are not
used: the only cross-encoder available offline has an untrained head.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol

from citewall.retrieval.types import RetrievedContext
from citewall.text.terms import STOPWORDS, WORD, content_terms, stem

#: Retrieved cards (best first) whose words count towards coverage.
COVERAGE_CARDS = 3
#: Stems of words that phrase a question rather than name its subject ("can you tell me",
#: "I need to know"): never key terms.
PHRASING = frozenset(
    {"know", "tell", "true", "need", "want", "pleas", "help", "like", "way", "also", "possibl"}
)


@dataclass(frozen=True, slots=True)
class Signals:
    dense: float
    coverage: float
    key_coverage: float = 1.0

    def as_dict(self) -> dict[str, float]:
        return {
            "dense": round(self.dense, 4),
            "coverage": round(self.coverage, 4),
            "key_coverage": round(self.key_coverage, 4),
        }


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """The KB's common terms (stems): a question word among them names no specific thing."""

    common: frozenset[str] = frozenset()


NO_VOCABULARY = Vocabulary()


@dataclass(frozen=True, slots=True)
class Thresholds:
    min_dense: float
    min_coverage: float
    min_key_coverage: float = 0.0

    def answerable(self, signals: Signals) -> bool:
        return (
            signals.dense >= self.min_dense
            and signals.coverage >= self.min_coverage
            and signals.key_coverage >= self.min_key_coverage
        )

    def measure(self, query: str, context: RetrievedContext) -> Signals:
        """The signals these thresholds are compared with (no KB vocabulary)."""
        return measure(query, context)

    def as_dict(self) -> dict[str, float]:
        return asdict(self)

    def status(self) -> dict[str, Any]:
        """For /readyz: fixed thresholds, no calibration."""
        return {"source": "fixed", "thresholds": self.as_dict(), "override": True}


class Decider(Protocol):
    """What the answer pipeline asks of abstention: the signals of a context, and the verdict."""

    def measure(self, query: str, context: RetrievedContext) -> Signals: ...

    def answerable(self, signals: Signals) -> bool: ...

    def status(self) -> dict[str, Any]: ...


def key_terms(query: str, vocabulary: Vocabulary = NO_VOCABULARY) -> set[str]:
    """The stems of ``query``'s key terms: numbers, capitalised words after the first word,
    and words that are not among the KB's common terms.

    >>> common = Vocabulary(frozenset({"ship", "day"}))
    >>> sorted(key_terms("Do you ship to Germany in 2 days?", common))
    ['2', 'germani']
    """
    found: set[str] = set()
    for i, token in enumerate(WORD.findall(query)):
        word = token.lower()
        if word in STOPWORDS:
            continue
        term = stem(word)
        if term in PHRASING:
            continue
        named = i > 0 and token[0].isupper()
        if any(ch.isdigit() for ch in token) or named or term not in vocabulary.common:
            found.add(term)
    return found


def measure(
    query: str, context: RetrievedContext, vocabulary: Vocabulary = NO_VOCABULARY
) -> Signals:
    """The answerability signals of ``context`` for ``query``.

    >>> from citewall.retrieval.types import ContextChunk, RetrievedContext
    >>> chunk = ContextChunk(id="c", text="Refunds take 5 days.")
    >>> measure("how long do refunds take on saturday?", RetrievedContext([chunk], top_dense=0.61))
    Signals(dense=0.61, coverage=0.5, key_coverage=0.5)
    """
    chunks = context.chunks
    dense = context.top_dense
    if dense is None:  # a retriever that does not report it: the best the context shows
        dense = max((c.dense_score for c in chunks if c.dense_score is not None), default=0.0)
    terms = content_terms(query)
    if not terms:
        return Signals(dense=float(dense), coverage=0.0, key_coverage=0.0)
    seen: set[str] = set()
    for chunk in chunks[:COVERAGE_CARDS]:
        seen |= content_terms(f"{chunk.title} {chunk.all_text}")
    keys = key_terms(query, vocabulary)
    best = content_terms(f"{chunks[0].title} {chunks[0].all_text}") if chunks else set()
    key_coverage = len(keys & best) / len(keys) if keys else 1.0
    return Signals(
        dense=float(dense), coverage=len(terms & seen) / len(terms), key_coverage=key_coverage
    )
