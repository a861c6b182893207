"""Content terms of English text: lower-cased words, stopwords dropped, Snowball-stemmed.

One definition for every place that compares a question with text by its words: the extractive
answerer's lexical overlap, the answerability signals, follow-up detection and the grouping of
knowledge gaps. The citation-support judge of the evaluation package (``citewall_evals``) uses
``STOPWORDS`` too.
"""

from __future__ import annotations

import re
import threading

import Stemmer

#: Function words and question words that carry no topic.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "by",
        "at",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "how",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "can",
        "could",
        "should",
        "would",
        "will",
        "i",
        "you",
        "we",
        "they",
        "it",
        "this",
        "that",
        "these",
        "those",
        "my",
        "your",
        "our",
        "their",
        "me",
        "us",
        "them",
        "not",
        "no",
        "yes",
        "there",
        "here",
        "about",
        "into",
        "than",
        "then",
        "so",
        "such",
        "may",
        "might",
        "must",
        "have",
        "has",
        "had",
        "get",
        "got",
        "its",
        "any",
        "all",
        "some",
        "more",
        "most",
    ]
)

WORD = re.compile(r"[A-Za-z0-9]+")

# Stemmer objects are not thread-safe; the server answers on worker threads.
_local = threading.local()


def stem(word: str) -> str:
    """The Snowball (English) stem of a lower-cased word."""
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return str(stemmer.stemWord(word))


def words(text: str) -> list[str]:
    """Lower-cased alphanumeric words, in order.

    >>> words("Can't void it, SwiftFreight?")
    ['can', 't', 'void', 'it', 'swiftfreight']
    """
    return [w.lower() for w in WORD.findall(text)]


def content_terms(text: str) -> set[str]:
    """Stems of the words that are not stopwords.

    >>> sorted(content_terms("How long do refunds take for annual plans?"))
    ['annual', 'long', 'plan', 'refund', 'take']
    """
    return {stem(w) for w in words(text) if w not in STOPWORDS}
