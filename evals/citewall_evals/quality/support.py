"""The support judge: does a card (or a set of cards) support an answer sentence?

No NLI model ships offline, so support is judged from two signals that the packaged
all-MiniLM-L6-v2 and plain tokens give, against each *unit* of the evidence (a sentence of a
card, and each ``;``-separated clause of it):

- ``cosine``: cosine similarity of the sentence's embedding and the unit's embedding;
- ``lexical``: share of the sentence's content tokens (stemmed, stopwords removed) present in
  the unit;
- ``key``: share of the sentence's *key terms* (numbers, codes, capitalised names) present in
  the unit. Dense and lexical similarity both miss a swapped number or carrier ("SwiftFreight
  labels can be voided for 28 days" against "NorthPost ... 28 days; SwiftFreight ... 14 days"),
  key terms are how the judge sees that.

A unit supports the sentence when ``key >= min_key`` and ``weight*cosine + (1-weight)*lexical
>= threshold``; the evidence supports it when any unit does. ``weight``, ``min_key`` and
``threshold`` are calibrated on ``kb/eval/support_labels.jsonl`` (see ``calibration``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import Stemmer

from citewall.citations.markers import strip_markers
from citewall.citations.sentences import split_sentences
from citewall.text.terms import STOPWORDS
from citewall_evals.redteam.catalogue import KbCard

# Hyphens split ("15-minute" -> 15, minute) so a number reads the same in either spelling.
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z0-9]+)*")
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        ]
    )
}


@dataclass(frozen=True, slots=True)
class SupportThresholds:
    """The judge's calibrated parameters (see module docstring)."""

    weight: float = 0.5
    threshold: float = 0.6
    min_key: float = 1.0

    def as_dict(self) -> dict[str, float]:
        return {"weight": self.weight, "threshold": self.threshold, "min_key": self.min_key}


@dataclass(frozen=True, slots=True)
class UnitFeatures:
    """The three signals of one sentence against one evidence unit."""

    cosine: float
    lexical: float
    key: float

    def score(self, weight: float) -> float:
        return weight * self.cosine + (1.0 - weight) * self.lexical


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    return Stemmer.Stemmer("english")


#: Words that flip or bound a claim: a sentence that says "never", "all" or "immediately" is not
#: supported by a unit that does not say it too.
_POLARITY = frozenset(
    [
        "never",
        "not",
        "no",
        "cannot",
        "can't",
        "all",
        "any",
        "every",
        "only",
        "once",
        "twice",
        "always",
        "immediately",
        "permanently",
        "automatically",
        "free",
        "unlimited",
        "none",
        "both",
        "either",
        "proactively",
    ]
)


def _words(text: str) -> list[str]:
    """Lower-cased words with number words as digits ("seven" -> "7")."""
    return [_NUMBER_WORDS.get(w.lower(), w.lower()) for w in _TOKEN.findall(text)]


def all_tokens(text: str) -> set[str]:
    """Lower-cased, stemmed tokens, stopwords kept (key terms are matched against these)."""
    return set(_stemmer().stemWords(_words(text)))


def content_tokens(text: str) -> set[str]:
    """Lower-cased, stemmed tokens without stopwords.

    >>> sorted(content_tokens("Labels can be voided for 28 days"))
    ['28', 'day', 'label', 'void']
    """
    kept = [w for w in _words(text) if w not in STOPWORDS]
    return set(_stemmer().stemWords(kept))


def key_terms(text: str) -> set[str]:
    """Numbers, codes, capitalised names (not sentence-initial) and polarity words, stemmed.

    >>> sorted(key_terms("SwiftFreight labels can be voided for 28 days."))
    ['28', 'swiftfreight']
    """
    terms: list[str] = []
    for i, match in enumerate(_TOKEN.finditer(text)):
        word = match.group(0)
        if word.lower() in _NUMBER_WORDS:
            terms.append(_NUMBER_WORDS[word.lower()])
            continue
        is_number = any(ch.isdigit() for ch in word)
        is_code = word.isupper() and len(word) > 1
        inner_caps = any(ch.isupper() for ch in word[1:])
        capitalised = word[0].isupper() and i > 0 and word.lower() not in STOPWORDS
        polar = word.lower() in _POLARITY
        if is_number or is_code or inner_caps or capitalised or polar:
            terms.append(word.lower())
    return set(_stemmer().stemWords(terms))


def evidence_units(text: str) -> list[str]:
    """A card's sentences and, for sentences with ``;``, each clause too.

    (Adjacent-sentence pairs were tried as extra units: leave-one-out accuracy fell from 0.89
    to 0.82 on the labelled sample, as pairs let near misses borrow a term from next door.)
    """
    sentences = [s.strip() for s in split_sentences(text) if s.strip()]
    units: list[str] = []
    for sentence in sentences:
        units.append(sentence)
        clauses = [c.strip() for c in sentence.split(";") if len(c.split()) >= 3]
        if len(clauses) > 1:
            units.extend(clauses)
    return units or [text]


class SupportJudge:
    """Judge support of answer sentences by the cards of a KB (embeddings cached per text)."""

    def __init__(
        self,
        embedder: Any,
        cards: Mapping[str, KbCard],
        thresholds: SupportThresholds | None = None,
    ) -> None:
        self.embedder = embedder
        self.cards = cards
        self.thresholds = thresholds or SupportThresholds()
        self._vectors: dict[str, np.ndarray[Any, Any]] = {}
        self._units: dict[str, list[str]] = {}

    def _embed(self, texts: Iterable[str]) -> None:
        missing = sorted({t for t in texts if t not in self._vectors})
        if missing:
            vectors = self.embedder.embed_documents(missing)
            for text, vector in zip(missing, vectors, strict=True):
                self._vectors[text] = np.asarray(vector, dtype=np.float32)

    def units_of(self, card_id: str) -> list[str]:
        """The evidence units of a card (empty for an unknown id)."""
        if card_id not in self._units:
            card = self.cards.get(card_id)
            self._units[card_id] = evidence_units(card.text) if card else []
        return self._units[card_id]

    def warm(self, card_ids: Iterable[str], sentences: Iterable[str] = ()) -> None:
        """Embed these cards' units and sentences in one batch (faster than one by one)."""
        texts = [u for cid in card_ids for u in self.units_of(cid)]
        self._embed([*texts, *(strip_markers(s).strip() for s in sentences)])

    def features(self, sentence: str, card_ids: Sequence[str]) -> list[UnitFeatures]:
        """The sentence's features against every unit of the given cards."""
        clean = strip_markers(sentence).strip()
        units = [u for cid in dict.fromkeys(card_ids) for u in self.units_of(cid)]
        if not clean or not units:
            return []
        self._embed([clean, *units])
        s_vec = self._vectors[clean]
        s_tokens = content_tokens(clean)
        s_keys = key_terms(clean)
        out: list[UnitFeatures] = []
        for unit in units:
            u_tokens = content_tokens(unit)
            cosine = float(np.dot(s_vec, self._vectors[unit]))
            lexical = len(s_tokens & u_tokens) / len(s_tokens) if s_tokens else 0.0
            key = len(s_keys & all_tokens(unit)) / len(s_keys) if s_keys else 1.0
            out.append(UnitFeatures(cosine=cosine, lexical=lexical, key=key))
        return out

    def score(self, sentence: str, card_ids: Sequence[str]) -> float:
        """Best unit score among units that pass the key-term gate (-1.0 when none does)."""
        t = self.thresholds
        passing = [
            f.score(t.weight) for f in self.features(sentence, card_ids) if f.key >= t.min_key
        ]
        return max(passing, default=-1.0)

    def supports(self, sentence: str, card_ids: Sequence[str]) -> bool:
        """True when some unit of the cards supports the sentence (see module docstring)."""
        return self.score(sentence, card_ids) >= self.thresholds.threshold


def judgeable(sentence: str) -> bool:
    """Sentences with fewer than three content tokens ("Here is what I found:") are not
    claims; the citation metrics skip them (ALCE scores statements)."""
    return len(content_tokens(strip_markers(sentence))) >= 3
