"""Verbatim overlap between answer prose and a card's text, in words.

What the corpus protection counts (docs/distillation.md): which of a card's sentences an answer
repeats whole, and the longest run of consecutive words it shares with the card. Words are
case-folded runs of letters and digits, so punctuation, markup, spacing and citation markers
do not hide a copy (``"Refunds take 5 days [1]."`` repeats ``"Refunds take 5 days."``).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from difflib import SequenceMatcher

from citewall.citations.markers import strip_markers
from citewall.citations.sentences import split_sentences

#: A card sentence shorter than this many words is not counted as a sentence of its own
#: (headings, "Yes.", list stubs): repeating it reveals nothing.
MIN_SENTENCE_WORDS = 4

_WORD = re.compile(r"[^\W_]+")

Words = tuple[str, ...]


def words(text: str) -> Words:
    """The case-folded words of ``text`` (NFKC), citation markers dropped.

    >>> words("Refunds take 5-10 days [1].")
    ('refunds', 'take', '5', '10', 'days')
    """
    folded = unicodedata.normalize("NFKC", strip_markers(text)).casefold()
    return tuple(_WORD.findall(folded))


def card_sentences(text: str) -> list[Words]:
    """The sentences of a card as words, in order; short ones (``MIN_SENTENCE_WORDS``) are
    empty tuples, so indexes stay those of ``split_sentences``."""
    out: list[Words] = []
    for sentence in split_sentences(text or ""):
        w = words(sentence)
        out.append(w if len(w) >= MIN_SENTENCE_WORDS else ())
    return out


def sentence_key(sentence: Words) -> str:
    """A short stable key of a sentence's words: the same sentence in any chunk or version of
    a card has the same key, so distinct sentences can be counted across answers.

    >>> sentence_key(words("Refunds take 5 days.")) == sentence_key(words("refunds TAKE 5 days"))
    True
    """
    return hashlib.sha256(" ".join(sentence).encode("utf-8")).hexdigest()[:16]


def contains_run(haystack: Words, needle: Words) -> bool:
    """Does ``haystack`` contain ``needle`` as consecutive words?

    >>> contains_run(("a", "b", "c"), ("b", "c")), contains_run(("ab", "c"), ("b", "c"))
    (True, False)
    """
    if not needle:
        return False
    return f" {' '.join(needle)} " in f" {' '.join(haystack)} "


def repeated_sentences(prose: Words, sentences: Sequence[Words]) -> list[int]:
    """Indexes of the counted ``sentences`` that ``prose`` repeats whole."""
    joined = f" {' '.join(prose)} "
    return [i for i, s in enumerate(sentences) if s and f" {' '.join(s)} " in joined]


def longest_span(a: Words, b: Words) -> int:
    """The length of the longest run of consecutive words ``a`` and ``b`` share.

    >>> longest_span(("x", "refunds", "take", "five", "days"), ("refunds", "take", "five"))
    3
    """
    if not a or not b:
        return 0
    return SequenceMatcher(None, a, b, autojunk=False).find_longest_match().size
