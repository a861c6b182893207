"""The staff-only sentence detector: is this sentence for staff, not for the member?

Internal playbooks mix what staff do ("Escalate to Tier 2 with the order number", "Tag the
ticket with GW-BUG") with what the member may be told ("Reissues are free once per return").
A generator that copies or paraphrases a playbook can pass the first kind on; this detector
says, sentence by sentence, which ones must not reach the member, and why. It is pure: the
sentence and a per-KB ``StaffVocabulary`` in, a ``StaffVerdict`` out.

Signals, each meant to hold on any KB, not only the demo:

- ``internal_term``: a capitalised name or code-like token that occurs in the KB's internal
  cards and never in its public ones (the internal tool "Helm", a macro "TS-03"). Built once per
  KB version by ``staff_vocabulary``.
- ``code``: a code-like token (``GW-OUTAGE``, ``REF-12``, ``FRAUD-LOSS``) that no public card
  uses: reason codes, ticket tags and macro names are staff vocabulary on any KB.
- ``handoff``: a staff role as the one who acts or takes over ("Tier 2", "the team lead",
  "on-call", "escalate to", "goes to the claims team").
- ``instruction``: a step addressed to staff: an action on the merchant in the third person
  ("ask the merchant", "tell them", "do not tell the customer"), or on staff objects (the ticket,
  the case, the internal note, the handover, a macro).
- ``threshold``: an internal score or signal ("when the score is above 70", "two or more
  signals").

Every signal matches anywhere in the sentence, so the verdict is monotone: adding text to a
staff-only sentence never makes it member-safe (property-tested).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

#: Internal cards a capitalised name must occur in to count as internal vocabulary.
MIN_INTERNAL_CARDS = 2

Reason = Literal["internal_term", "code", "handoff", "instruction", "threshold"]

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*")
# An identifier staff type, not a word: capitals and digits joined by a dash or underscore
# (``GW-OUTAGE``, ``REF-12``, ``CWLEAKB-X5QVP5``), capitals then digits (``SEV1``), or a chat
# channel (``#rates-incidents``). Lower-case identifiers (``pk_test_``) are not codes.
_CODE = re.compile(
    r"\b[A-Z][A-Z0-9]+(?:[-_][A-Z0-9]+)+\b|\b[A-Z]{2,}[0-9]+\b|(?<![\w&#])#[a-z][a-z0-9]*-[a-z0-9-]+"
)
# Calendar words are capitalised everywhere: never a KB's internal vocabulary.
_CALENDAR = frozenset(
    {"january", "february", "march", "april", "may", "june", "july", "august", "september"}
    | {"october", "november", "december", "monday", "tuesday", "wednesday", "thursday"}
    | {"friday", "saturday", "sunday"}
)

# What may precede a capitalised first word (the last three characters before it).
_CLAUSE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*|[\"“(]\s*)$")

# The member in the third person ("ask the merchant"): a public page says "you".
_THIRD_PERSON = (
    r"(?:the |a |our |their )?(?:merchant|merchants|customer|customers|account holder|"
    r"requester|caller)\b"
)
_STAFF_VERBS = (
    r"ask|tell|remind|advise|guide|point|notify|offer|suggest|explain to|reply to|update|"
    r"direct|invite|promise|give|send|keep"
)
# Verbs that, with "them", only staff are told to do ("remind them", "point them to").
_THEM_VERBS = r"tell|remind|advise|guide|point|notify|keep"
_STAFF_OBJECTS = (
    r"the ticket|(?:log|close|record|note|update|reopen|assign) the case|internal note|"
    r"(?:in|to) the handover|hand(?:ing)? off|escalation form|"
    r"case history|playbook|next shift|audit label|follow-up task|ticket notes|"
    r"the qa sampler|\bqa\b|with macro|macro [A-Za-z]|(?:the|our) (?:\w+ )?wiki\b|contacts sheet"
)
_ROLE = (
    r"tier ?[1-3]|team lead|support lead|desk lead|support manager|head of support|"
    r"on-call|on call|incident commander|account manager there|our (?:\w+ )?(?:lead|engineer)|"
    r"the (?:\w+ )?team|(?:billing|support|integrations|identity|privacy|claims|data|"
    r"platform|mobile|partnerships|sales|finance|legal|engineering) (?:desk|team|lead)|"
    r"trust (?:&|and) safety|finance|legal|engineering|platform|sales"
)

_PATTERNS: tuple[tuple[Reason, re.Pattern[str]], ...] = (
    ("handoff", re.compile(r"\btier ?[1-3]\b|\bescalate\b", re.I)),
    (
        "handoff",
        re.compile(
            r"\b(?:escalat\w*|route[ds]?|routing|forward(?:ed|s)?|"
            r"hand(?:ed|s)? (?:it )?(?:off|over)|pass(?:ed)? (?:it )?on|goes? to|go through|"
            r"page[sd]?|paging)\b[^.;]{0,40}?\b(?:" + _ROLE + r")\b",
            re.I,
        ),
    ),
    (
        "handoff",
        re.compile(
            r"\b(?:team lead|support lead|desk lead|support manager|head of support|on-call|"
            r"incident commander)\b",
            re.I,
        ),
    ),
    (
        "handoff",
        re.compile(
            r"\b(?:the |our )?(?:identity|privacy|claims|data|platform|mobile|partnerships|"
            r"integrations|billing) (?:team|desk|lead)\b[^.;]{0,30}\b(?:approves?|decides?|"
            r"(?:can|may)(?! be)|restores?|scopes?|sends?|handles?)\b"
            r"|\b(?:integrations|platform|engineering|finance|legal) (?:can|may|posts?|approves?|"
            r"decides?)\b(?! be)",
            re.I,
        ),
    ),
    ("handoff", re.compile(r"\b(?:ask|report \w+ \w+ to) trust (?:&|and) safety\b", re.I)),
    (
        "instruction",
        re.compile(
            r"\b(?:"
            + _STAFF_VERBS
            + r")\s+"
            + _THIRD_PERSON
            + r"|\b(?:"
            + _THEM_VERBS
            + r")\s+them\b"
            # "say that sales will reply" (to staff), not "let's say that" or "common to say".
            + r"|(?<!let's )(?<!to )(?<!will )(?<!would )\b(?:say|reply) (?:that|we|\")"
            + r"|\bsupport (?:never|only)\b",
            re.I,
        ),
    ),
    (
        "instruction",
        re.compile(
            r"\b(?:never|do not|don't|not to)\s+(?:tell|mention|promise|quote|share with|"
            r"ask|offer|credit|waive|stack|invite|close|delay)\b(?!\s+you\b)",
            re.I,
        ),
    ),
    ("instruction", re.compile(r"\b(?:" + _STAFF_OBJECTS + r")", re.I)),
    (
        "instruction",
        re.compile(
            r"\b(?:tag|flag|log|record|note) (?:the|this|every|it in|it on) "
            r"(?:account|ticket|case|request|conversation|incident)",
            re.I,
        ),
    ),
    ("instruction", re.compile(r"\bask for (?:ID|identification|the use case)\b", re.I)),
    (
        "instruction",
        re.compile(r"\b(?:approve|decline|reject|deny)(?: (?:if|when|unless)\b|:)", re.I),
    ),
    (
        "instruction",
        re.compile(r"\b(?:agents|staff) (?:may|must|should|never|can)\b|\bby agents\b", re.I),
    ),
    (
        "threshold",
        re.compile(
            r"\b(?:score|risk|signals?)\b[^.;]{0,20}\b(?:above|over|below|under|exceeds?|"
            r"or more)\b|\b(?:two|three|\d+) or more signals\b",
            re.I,
        ),
    ),
)


@dataclass(frozen=True, slots=True)
class StaffVocabulary:
    """A KB's staff-only words: capitalised names and codes of its internal cards that no
    public card uses (``internal``), and the code-like tokens its public cards do use
    (``public_codes``: "UTF-8" in a public card is not a reason code)."""

    internal: frozenset[str] = frozenset()
    public_codes: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class StaffVerdict:
    """Whether a sentence is staff-only, and the first signal that said so (with the text it
    matched); ``reason`` and ``matched`` are None for a member-safe sentence."""

    staff_only: bool
    reason: Reason | None = None
    matched: str | None = None


MEMBER_SAFE = StaffVerdict(staff_only=False)


def _names(text: str) -> Iterable[str]:
    """The code-like tokens of ``text``, and its capitalised tokens that do not open a sentence
    or clause (a name, not a capitalised first word)."""
    yield from (m.group(0) for m in _CODE.finditer(text))
    for m in _TOKEN.finditer(text):
        if m.group(0)[0].isupper() and not _CLAUSE_START.search(
            text[max(0, m.start() - 3) : m.start()]
        ):
            yield m.group(0)


def staff_vocabulary(internal_texts: Iterable[str], public_texts: Iterable[str]) -> StaffVocabulary:
    """The ``StaffVocabulary`` of a KB from the texts (titles and bodies) of its internal and
    public cards. A name counts as internal when at least
    ``MIN_INTERNAL_CARDS`` internal texts hold it and no public text does, in any case.

    >>> v = staff_vocabulary(["Check Helm > Shipments.", "Void it in Helm."], ["Open Shipments."])
    >>> sorted(v.internal)
    ['Helm']
    """
    public_words: set[str] = set()
    public_codes: set[str] = set()
    for text in public_texts:
        public_words.update(t.lower() for t in _TOKEN.findall(text))
        public_codes.update(m.group(0) for m in _CODE.finditer(text))
    seen: Counter[str] = Counter()
    for text in internal_texts:
        seen.update(set(_names(text)))
    # A name in a single internal card may be incidental (a product mentioned once); a
    # tool or team staff work with recurs.
    internal = {
        name
        for name, cards in seen.items()
        if cards >= MIN_INTERNAL_CARDS
        and name.lower() not in public_words
        and name.lower() not in _CALENDAR
    }
    return StaffVocabulary(internal=frozenset(internal), public_codes=frozenset(public_codes))


def judge(sentence: str, vocabulary: StaffVocabulary = StaffVocabulary()) -> StaffVerdict:
    """Is ``sentence`` staff-only? The first signal that fires, with what it matched.

    >>> judge("Escalate to Tier 2 with the order number.").reason
    'handoff'
    >>> judge("Reissues are free for the merchant once per return.").staff_only
    False
    >>> judge("Log it in Helm.", StaffVocabulary(internal=frozenset({"Helm"}))).matched
    'Helm'
    """
    for m in _CODE.finditer(sentence):
        if m.group(0) not in vocabulary.public_codes:
            return StaffVerdict(True, "code", m.group(0))
    for m in _TOKEN.finditer(sentence):
        if m.group(0) in vocabulary.internal:
            return StaffVerdict(True, "internal_term", m.group(0))
    for reason, pattern in _PATTERNS:
        if found := pattern.search(sentence):
            return StaffVerdict(True, reason, found.group(0))
    return MEMBER_SAFE
