"""Follow-up questions: the query retrieval runs with, given the conversation so far.

"and what about annual plans?" means nothing alone. With a model behind the generator
(``ModelCondenser``), the model rewrites the message into a self-contained question: one short
extra call with its own timeout, falling back to the deterministic rule when it fails or
returns nothing usable. The rule (the extractive generator's condensation) decides whether
the new message is a follow-up and, if so, retrieves with the previous question's query
followed by the new message; a self-contained question (a topic switch) is retrieved alone.

A message is a follow-up when the conversation has a previous question and the message
- does not open by announcing a new subject ("different question: ...", "unrelated, ..."),
- and opens with a continuation cue ("and ...", "what about ...", "same for ...", "ok so ..."),
- or holds a word that leans on what came before anywhere ("also", "too", "instead",
  "now what"), or ends on one ("... then?"),
- or has at most ``MAX_TERMS_SHORT`` content terms in at most ``MAX_WORDS_SHORT`` words
  ("how long?", "laptops?"),
- or points back (it, that, this, those, them, one, same, such, they, she, her, ..., a
  non-existential "there"), has at most ``MAX_TERMS_ANAPHORA`` content terms, and at most
  ``MAX_TERMS_BEFORE_POINTER`` of them come before the word pointing back: in "customer says
  the parcel shows delivered but they never got it", "they" and "it" point at the customer and
  the parcel of the message itself.
The cue and pronoun lists and the limits were chosen on the follow-up dev splits of the demo,
Zulip and FastAPI sets (``kb/eval/followups.dev.jsonl``, ``kb/eval/*/followups.dev.jsonl``;
docs/answering.md).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from citewall.errors import GenerationError
from citewall.generation.protocols import Turn
from citewall.text.cleaning import clean_text
from citewall.text.terms import content_terms, words

MAX_TERMS_SHORT = 2
#: ... in a message this short: "What is the capital of Mongolia?" is short of terms but a
#: whole question.
MAX_WORDS_SHORT = 4
MAX_TERMS_ANAPHORA = 9
#: Content terms a message may hold before its word pointing back: more, and the word points at
#: something the message itself names.
MAX_TERMS_BEFORE_POINTER = 4
#: Previous questions a chain of follow-ups may reach back through.
MAX_DEPTH = 3

#: Openings that continue the previous question.
_CUES: tuple[tuple[str, ...], ...] = tuple(
    tuple(cue.split())
    for cue in (
        "and",
        "what about",
        "how about",
        "what if",
        "same for",
        "same with",
        "but",
        "then",
        "ok so",
        "okay so",
        "ok and",
        "okay and",
        "so",
        "or",
        "plus",
        "in that case",
    )
)
#: Openings that announce a new subject: the message is retrieved alone whatever follows.
_NEW_SUBJECT: tuple[tuple[str, ...], ...] = tuple(
    tuple(cue.split())
    for cue in (
        "different question",
        "another question",
        "new question",
        "separate question",
        "other question",
        "unrelated",
        "different topic",
        "new topic",
        "other topic",
        "something else",
        "changing the subject",
        "change of subject",
        "on another note",
    )
)
#: Words that lean on something said before wherever they stand.
_ANYWHERE = frozenset(["also", "too", "instead", "either"])
_ANYWHERE_PAIRS = frozenset([("now", "what"), ("what", "now")])
#: Words that lean on something said before when they end the message ("... then?").
_LAST = frozenset(["then", "though"])
#: Words pointing back at something (``there`` only when not "is there"/"are there").
_ANAPHORA = frozenset(
    ["it", "its", "that", "this", "those", "these", "them", "one", "ones", "same", "such"]
) | frozenset(["they", "their", "theirs", "he", "him", "his", "she", "her", "hers"])
_EXISTENTIAL = frozenset(["is", "are", "was", "were", "any"])

CondenseMethod = Literal["standalone", "rule", "model", "rule_fallback"]


@dataclass(frozen=True, slots=True)
class Condensed:
    """The query to retrieve with, and how it was made."""

    query: str
    method: CondenseMethod


class Condenser(Protocol):
    """Turns the new message and the conversation into a self-contained retrieval query."""

    def condense(self, question: str, history: Sequence[Turn]) -> Condensed: ...


def is_followup(question: str) -> bool:
    """Whether ``question`` leans on an earlier one (see the module docstring).

    >>> is_followup("and what about annual plans?"), is_followup("do they need to sign anything?")
    (True, True)
    >>> is_followup("How do I reset my password for the mobile app?")
    False
    >>> is_followup("unrelated, how do I reset it?")
    False
    """
    found = words(question)
    if not found or _opens_with(found, _NEW_SUBJECT):
        return False
    if _opens_with(found, _CUES) or found[-1] in _LAST:
        return True
    if _ANYWHERE & set(found) or _ANYWHERE_PAIRS & set(itertools.pairwise(found)):
        return True
    n_terms = len(content_terms(question))
    if n_terms <= MAX_TERMS_SHORT and len(found) <= MAX_WORDS_SHORT:
        return True
    pointer = _first_pointer(found)
    return (
        pointer is not None
        and n_terms <= MAX_TERMS_ANAPHORA
        and len(content_terms(" ".join(found[:pointer]))) <= MAX_TERMS_BEFORE_POINTER
    )


def _opens_with(found: list[str], openings: tuple[tuple[str, ...], ...]) -> bool:
    return any(tuple(found[: len(o)]) == o for o in openings)


def _first_pointer(found: list[str]) -> int | None:
    """Where the first word pointing back stands in ``found`` (None: nowhere)."""
    for i, w in enumerate(found):
        if w in _ANAPHORA or (w == "there" and (i == 0 or found[i - 1] not in _EXISTENTIAL)):
            return i
    return None


def rule_query(question: str, history: Sequence[Turn]) -> str:
    """The retrieval query by the deterministic rule: a follow-up is appended to the query of
    the question before it (which may itself have been a follow-up, up to ``MAX_DEPTH``).

    >>> rule_query("and for annual plans?", [Turn("user", "How long do refunds take?")])
    'How long do refunds take? and for annual plans?'
    """
    asked = [t.content for t in history if t.role == "user"]
    return _chain(question, asked[-MAX_DEPTH:])


def _chain(question: str, earlier: list[str]) -> str:
    if not earlier or not is_followup(question):
        return question
    return f"{_chain(earlier[-1], earlier[:-1])} {question}"


class PlainCondenser:
    """No conversation context: every message is retrieved alone."""

    def condense(self, question: str, history: Sequence[Turn]) -> Condensed:
        return Condensed(question, "standalone")


class RuleCondenser:
    """The deterministic condensation (the extractive generator's, and every fallback)."""

    def condense(self, question: str, history: Sequence[Turn]) -> Condensed:
        query = rule_query(question, history)
        return Condensed(query, "standalone" if query == question else "rule")


class Completer(Protocol):
    """A model that completes chat messages (``OpenAICompatGenerator.complete``)."""

    def complete(
        self, messages: list[dict[str, str]], *, max_tokens: int, timeout_s: float
    ) -> str: ...


REWRITE_INSTRUCTIONS = (
    "You rewrite a user's latest message in a support chat into one self-contained question. "
    "Use the earlier messages only to resolve what the latest message refers to (pronouns, "
    "'what about ...', 'and for ...'). If the latest message is already self-contained or "
    "changes the subject, repeat it unchanged. Reply with the question only: no answer, no "
    "quotes, no preface."
)
#: Earlier user messages shown to the rewriting model.
REWRITE_TURNS = 3
#: A rewrite longer than this (characters) is not a question; the rule is used instead.
MAX_REWRITE_CHARS = 400


def rewrite_messages(question: str, history: Sequence[Turn]) -> list[dict[str, str]]:
    """The chat messages asking a model to rewrite ``question`` given the earlier questions."""
    asked = [t.content for t in history if t.role == "user"][-REWRITE_TURNS:]
    earlier = "\n".join(f"- {q}" for q in asked)
    return [
        {"role": "system", "content": REWRITE_INSTRUCTIONS},
        {
            "role": "user",
            "content": f"Earlier messages:\n{earlier}\n\nLatest message: {question}\n\n"
            "Self-contained question:",
        },
    ]


def parse_rewrite(text: str) -> str | None:
    """The rewritten question from a model's reply, or None when it is unusable.

    >>> parse_rewrite('Question: "How long do refunds take for annual plans?"')
    'How long do refunds take for annual plans?'
    >>> parse_rewrite("") is None
    True
    """
    # A chatty preface ("Sure! Here is the question:") is not the question.
    lines = [
        line.strip()
        for line in clean_text(text).splitlines()
        if line.strip() and not line.strip().endswith(":")
    ]
    if not lines:
        return None
    first = next((line for line in lines if line.endswith("?")), lines[0])
    for prefix in ("self-contained question:", "question:", "rewritten question:"):
        if first.lower().startswith(prefix):
            first = first[len(prefix) :].strip()
    first = first.strip("\"'“”‘’` ").strip()
    if not first or len(first) > MAX_REWRITE_CHARS or not content_terms(first):
        return None
    return first


class ModelCondenser:
    """The model rewrites a message that follows earlier questions; the rule on any failure.

    A first message is used as it is (no call). The call has its own timeout
    (``CITEWALL_CONDENSE_TIMEOUT_S``), and its failure never fails the turn.
    """

    def __init__(self, model: Completer, *, timeout_s: float, max_tokens: int = 64) -> None:
        self.model = model
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens
        self.fallback = RuleCondenser()

    def condense(self, question: str, history: Sequence[Turn]) -> Condensed:
        if not any(t.role == "user" for t in history):
            return Condensed(question, "standalone")
        try:
            reply = self.model.complete(
                rewrite_messages(question, history),
                max_tokens=self.max_tokens,
                timeout_s=self.timeout_s,
            )
        except GenerationError:
            reply = ""
        query = parse_rewrite(reply)
        if query is None:
            return Condensed(self.fallback.condense(question, history).query, "rule_fallback")
        return Condensed(query, "model")
