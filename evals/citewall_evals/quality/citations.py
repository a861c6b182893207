"""ALCE-style citation recall and precision of a stored answer (Gao et al., "Enabling Large
Language Models to Generate Text with Citations", EMNLP 2023), with the support judge in place
of ALCE's NLI model.

For each judgeable sentence (a claim: three or more content tokens) of the stored content:

- **citation recall**: the sentence has at least one citation and the union of its cited cards
  supports it;
- **citation precision**, per (sentence, cited card): the citation is *relevant* when the card
  alone supports the sentence, or when the union supports the sentence and the union without
  this card does not (ALCE's definition: a citation that is needed is not an error).

Markers are resolved through the stored sources (``n`` -> ``card_id``); a marker that names no
stored source is counted as ``unresolved`` (it pointed outside the retrieved context).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from citewall.citations.markers import parse_markers
from citewall.citations.sentences import sentence_index, sentence_spans
from citewall_evals.quality.support import SupportJudge, judgeable


@dataclass(slots=True)
class CitationCounts:
    """Sums over answers; rates are derived so that several answers can be pooled."""

    sentences: int = 0
    supported_sentences: int = 0
    citations: int = 0
    relevant_citations: int = 0
    uncited_sentences: int = 0
    unresolved_markers: int = 0

    def add(self, other: CitationCounts) -> None:
        self.sentences += other.sentences
        self.supported_sentences += other.supported_sentences
        self.citations += other.citations
        self.relevant_citations += other.relevant_citations
        self.uncited_sentences += other.uncited_sentences
        self.unresolved_markers += other.unresolved_markers

    @property
    def recall(self) -> float:
        return self.supported_sentences / self.sentences if self.sentences else 0.0

    @property
    def precision(self) -> float:
        return self.relevant_citations / self.citations if self.citations else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "citation_recall": self.recall,
            "citation_precision": self.precision,
            "sentences": self.sentences,
            "supported_sentences": self.supported_sentences,
            "citations": self.citations,
            "relevant_citations": self.relevant_citations,
            "uncited_sentences": self.uncited_sentences,
            "unresolved_markers": self.unresolved_markers,
        }


def cited_sentences(
    content: str, sources: Iterable[Mapping[str, Any]]
) -> tuple[list[tuple[str, list[str]]], int]:
    """Each sentence of ``content`` with the card ids its markers cite, and the count of
    markers that resolve to no stored source."""
    by_n: dict[int, str] = {}
    for source in sources:
        try:
            by_n[int(source["n"])] = str(source["card_id"])
        except (KeyError, TypeError, ValueError):
            continue
    spans = sentence_spans(content)
    cited: list[list[str]] = [[] for _ in spans]
    unresolved = 0
    for marker in parse_markers(content):
        unresolved += marker.invalid
        for n in marker.numbers:
            card = by_n.get(n)
            if card is None:
                unresolved += 1
            elif cited and card not in cited[i := sentence_index(spans, marker.start)]:
                cited[i].append(card)
    return [(content[s:e], cards) for (s, e), cards in zip(spans, cited, strict=True)], unresolved


def score_answer(
    content: str, sources: Sequence[Mapping[str, Any]], judge: SupportJudge
) -> CitationCounts:
    """Citation recall/precision counts of one stored answer (content with markers)."""
    pairs, unresolved = cited_sentences(content, sources)
    judge.warm({c for _, cards in pairs for c in cards}, [s for s, _ in pairs])
    counts = CitationCounts(unresolved_markers=unresolved)
    for sentence, cards in pairs:
        if not judgeable(sentence):
            continue
        counts.sentences += 1
        if not cards:
            counts.uncited_sentences += 1
            continue
        union_ok = judge.supports(sentence, cards)
        counts.supported_sentences += union_ok
        for card in cards:
            counts.citations += 1
            alone = judge.supports(sentence, [card])
            others = [c for c in cards if c != card]
            needed = union_ok and not (others and judge.supports(sentence, others))
            counts.relevant_citations += alone or needed
    return counts
