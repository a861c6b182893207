"""The probe questions a calibration asks of a knowledge base (``retrieval.calibration``).

- **Answerable pseudo-questions**, made from each card: its title, its first headings and its
  first sentence, each turned into a question ("What should I know about Shipping?", "Is it
  true that we ship to the United States and Canada?"). They are worded close to the card, so
  they score higher than members' own questions; the fit accounts for that
  (``calibration.WORDING_GAP``).
- **Off-domain probes**: a fixed set shipped with citewall
  (``citewall/retrieval/data/off_domain_questions.txt``: about a hundred customer-style
  questions on weather, cooking, travel, other products...), which no help center answers.
- **Near-miss probes**: a pseudo-question with its most specific key term swapped for a term
  the KB never uses ("Do you ship to Germany?" on a KB that ships to the US and Canada): on
  topic, dense-similar, and still unanswerable.

Everything is deterministic: the same KB gives the same probes, so every replica and every
re-run fit the same thresholds.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from citewall.retrieval.answerability import Vocabulary, key_terms
from citewall.text.terms import STOPWORDS, WORD, content_terms, stem

#: A term in at least this share of the cards (and at least ``COMMON_MIN_CARDS``) is common.
COMMON_SHARE = 0.02
COMMON_MIN_CARDS = 2
#: Headings per card made into pseudo-questions.
HEADINGS_PER_CARD = 2
#: Terms swapped in for a near miss: places, carriers, brands, days, payment methods, languages;
#: the ones the KB uses are skipped.
SUBSTITUTES = (
    "Germany", "Japan", "Brazil", "Australia", "Mexico", "India", "DHL", "FedEx", "PayPal",
    "Bitcoin", "Klarna", "cheque", "Saturday", "Sunday", "WhatsApp", "Telegram", "fax",
    "Braille", "Mandarin", "Linux", "BlackBerry", "Alexa", "Excel", "Salesforce", "Zapier",
    "Jira", "Xbox", "Tesla", "Venmo", "Alipay", "Swahili", "Antarctica", "helicopter",
    "submarine", "llama", "saxophone", "volcano", "Kubernetes", "Fortran", "Minecraft",
)  # fmt: skip

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_MARKUP = re.compile(r"[*_`>#|\[\]]|\(https?://[^)]*\)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_TITLE_TEMPLATES = (
    "What should I know about {}?",
    "What about {}?",
    "Can you tell me about {}?",
)


@dataclass(frozen=True, slots=True)
class CardText:
    """What calibration reads of a card: its id, title and body (chunks joined in order)."""

    card_id: str
    title: str
    body: str


@dataclass(frozen=True, slots=True)
class Probe:
    """One probe question and what it is: ``answerable`` (made from card ``card_id``),
    ``off_domain`` or ``near_miss``."""

    question: str
    kind: str
    card_id: str | None = None


@cache
def off_domain_questions() -> tuple[str, ...]:
    """The shipped off-domain questions (comments and blank lines skipped)."""
    text = (resources.files("citewall.retrieval") / "data" / "off_domain_questions.txt").read_text(
        encoding="utf-8"
    )
    return tuple(
        line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


def document_frequencies(cards: Iterable[CardText]) -> tuple[Counter[str], int]:
    """Per stem, the number of cards that use it; and the number of cards."""
    df: Counter[str] = Counter()
    n = 0
    for card in cards:
        df.update(content_terms(f"{card.title} {card.body}"))
        n += 1
    return df, n


def vocabulary(df: Counter[str], n_cards: int) -> Vocabulary:
    """The KB's common terms: used by at least ``COMMON_SHARE`` of its cards (and 2).

    >>> sorted(vocabulary(Counter({"ship": 3, "canada": 1}), 4).common)
    ['ship']
    """
    floor = max(COMMON_MIN_CARDS, COMMON_SHARE * n_cards)
    return Vocabulary(frozenset(t for t, c in df.items() if c >= floor))


def _plain(text: str) -> str:
    return " ".join(_MARKUP.sub(" ", text).split())


def _lower_first(text: str) -> str:
    """``text`` with its first letter lower-cased unless the first word is a name ("API")."""
    first = text.split(" ", 1)[0]
    return text if first[1:2].isupper() or not first else text[0].lower() + text[1:]


def first_sentence(body: str, min_words: int = 5) -> str | None:
    """The body's first sentence of at least ``min_words`` words, markup removed."""
    for para in body.split("\n"):
        if _HEADING.match(para) or not para.strip():
            continue
        for sentence in _SENTENCE.split(_plain(para)):
            if len(sentence.split()) >= min_words:
                return sentence.rstrip(".!?:; ")
    return None


def pseudo_questions(card: CardText) -> list[str]:
    """Questions the card answers, made from its title, headings and first sentence.

    >>> for q in pseudo_questions(CardText("c", "Shipping", "We ship to the US and Canada.")):
    ...     print(q)
    What should I know about shipping?
    Is it true that we ship to the US and Canada?
    """
    out: list[str] = []
    title = _plain(card.title).rstrip("?.! ")
    if content_terms(title):  # "About us", "FAQ": a title that names no subject asks nothing
        template = _TITLE_TEMPLATES[zlib.crc32(card.card_id.encode()) % len(_TITLE_TEMPLATES)]
        asked = card.title.rstrip().endswith("?")
        out.append(f"{title}?" if asked else template.format(_lower_first(title)))
    headings = [_plain(h).rstrip("?.!: ") for h in _HEADING.findall(card.body)]
    for heading in [h for h in headings if h and h.lower() != title.lower()][:HEADINGS_PER_CARD]:
        out.append(f"How do I {_lower_first(heading)}?")
    if (sentence := first_sentence(card.body)) is not None:
        out.append(f"Is it true that {_lower_first(sentence)}?")
    return list(dict.fromkeys(out))


def near_miss(question: str, used: Vocabulary, kb_terms: frozenset[str]) -> str | None:
    """``question`` with its most specific key term swapped for a term the KB never uses.

    The most specific term is the longest key term (``answerability.key_terms``; a content word
    when there is none); the substitute is picked by a hash of the question among the
    ``SUBSTITUTES`` absent from ``kb_terms`` (every stem the KB uses). None when no word can
    be swapped.

    >>> near_miss("Do you ship to Canada?", Vocabulary(frozenset({"ship"})), frozenset({"canada"}))
    'Do you ship to Klarna?'
    """
    keys = key_terms(question, used)
    tokens = [t for t in WORD.findall(question) if t.lower() not in STOPWORDS]
    candidates = [t for t in tokens if stem(t.lower()) in keys] or tokens
    if not candidates:
        return None
    target = max(candidates, key=len)
    free = [s for s in SUBSTITUTES if not content_terms(s) & kb_terms]
    if not free:
        return None
    substitute = free[zlib.crc32(question.encode()) % len(free)]
    return re.sub(rf"\b{re.escape(target)}\b", substitute, question, count=1)


def sample_cards(cards: Sequence[CardText], limit: int) -> list[CardText]:
    """At most ``limit`` cards, the same ones on every run: the lowest hashes of their ids."""
    if len(cards) <= limit:
        return sorted(cards, key=lambda c: c.card_id)
    return sorted(cards, key=lambda c: zlib.crc32(c.card_id.encode()))[:limit]


def probes_for(
    cards: Sequence[CardText], used: Vocabulary, kb_terms: frozenset[str]
) -> list[Probe]:
    """Every probe for ``cards`` (already sampled): pseudo-questions, the shipped off-domain
    questions, and one near miss per card (from its first pseudo-question)."""
    out: list[Probe] = []
    for card in cards:
        questions = pseudo_questions(card)
        out.extend(Probe(q, "answerable", card.card_id) for q in questions)
        if questions and (miss := near_miss(questions[0], used, kb_terms)) is not None:
            out.append(Probe(miss, "near_miss"))
    out.extend(Probe(q, "off_domain") for q in off_domain_questions())
    return out
