"""Whether the retrieved context can answer the question: measured signals, tuned thresholds.

Two signals, both cheap (no model call; the dense scores come with retrieval):

- ``dense``: the best cosine similarity between the query and any chunk (dense retrieval's
  first hit, ``RetrievedContext.top_dense``; computed by retrieval anyway, and unaffected by
  what a reranker later keeps);
- ``coverage``: the share of the query's content terms (stemmed, stopwords dropped) that occur
  in the top ``COVERAGE_CARDS`` retrieved cards. A question about something the knowledge base
  never mentions ("Saturday phone hours", "DHL") keeps terms no retrieved card contains.

The question is answerable when both reach their thresholds. Reranker logits are not used: the
only cross-encoder available offline has an untrained head, whose scores carry no signal.
Thresholds are tuned on the dev split only (``evals.quality.abstention.tune``, reported by
``citewall eval`` as ``tuned_on_dev``; figures in docs/evaluation.md) and live in ``Settings``.
The coverage threshold tuned to 0.0: on dev it separates answerable from unanswerable questions
worse than the dense signal (AUC 0.64 vs 0.78) and adds nothing at the chosen operating point;
it is still measured, so a future KB can show otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from citewall.retrieval.types import RetrievedContext
from citewall.text.terms import content_terms

#: Retrieved cards (best first) whose words count towards coverage.
COVERAGE_CARDS = 3


@dataclass(frozen=True, slots=True)
class Signals:
    dense: float
    coverage: float

    def as_dict(self) -> dict[str, float]:
        return {"dense": round(self.dense, 4), "coverage": round(self.coverage, 4)}


@dataclass(frozen=True, slots=True)
class Thresholds:
    min_dense: float
    min_coverage: float

    def answerable(self, signals: Signals) -> bool:
        return signals.dense >= self.min_dense and signals.coverage >= self.min_coverage


def measure(query: str, context: RetrievedContext) -> Signals:
    """The answerability signals of ``context`` for ``query``.

    >>> from citewall.retrieval.types import ContextChunk, RetrievedContext
    >>> chunk = ContextChunk(id="c", text="Refunds take 5 days.")
    >>> measure("how long do refunds take on saturday?", RetrievedContext([chunk], top_dense=0.61))
    Signals(dense=0.61, coverage=0.5)
    """
    chunks = context.chunks
    dense = context.top_dense
    if dense is None:  # a retriever that does not report it: the best the context shows
        dense = max((c.dense_score for c in chunks if c.dense_score is not None), default=0.0)
    terms = content_terms(query)
    if not terms:
        return Signals(dense=float(dense), coverage=0.0)
    seen: set[str] = set()
    for chunk in chunks[:COVERAGE_CARDS]:
        seen |= content_terms(f"{chunk.title} {chunk.all_text}")
    return Signals(dense=float(dense), coverage=len(terms & seen) / len(terms))
