"""Greetings, thanks and other messages that ask nothing: a short friendly reply, no KB text.

A message is small talk only when ALL of its words are small-talk words ("hi", "thanks a lot",
"ok bye"), so "hi, how do refunds work?" is a question. Nothing is retrieved for small talk and
the answer's status is ``small_talk``: it is recorded as what it is, neither an answer from the
knowledge base nor a "not found".
"""

from __future__ import annotations

from citewall.text.terms import words

_GREETING = frozenset(
    ["hi", "hello", "hey", "hiya", "howdy", "yo", "morning", "afternoon", "evening", "greetings"]
)
_THANKS = frozenset(
    ["thanks", "thank", "thx", "ty", "cheers", "appreciated", "appreciate", "great", "perfect"]
)
_BYE = frozenset(["bye", "goodbye", "cya", "later", "night"])
_ACK = frozenset(
    [
        "ok",
        "okay",
        "k",
        "kk",
        "cool",
        "nice",
        "got",
        "gotcha",
        "understood",
        "sure",
        "alright",
        "fine",
        "yes",
        "no",
    ]
)
#: Words that may accompany the ones above without making the message a question.
_FILLER = frozenset(
    [
        "there",
        "all",
        "you",
        "very",
        "much",
        "so",
        "a",
        "lot",
        "good",
        "the",
        "again",
        "it",
        "team",
        "folks",
        "see",
    ]
)

GREETING_REPLY = (
    "Hi! Ask me a question and I'll answer it from the knowledge base, with its sources."
)
THANKS_REPLY = "You're welcome! Ask me anything else the knowledge base might cover."
BYE_REPLY = "Goodbye! Come back any time you have a question."
ACK_REPLY = "Is there anything else I can look up in the knowledge base for you?"
#: Every small-talk reply: how a stored answer from before the ``small_talk`` status (a
#: ``not_found`` one) is told to be small talk (the admin headline).
SMALL_TALK_REPLIES = frozenset({GREETING_REPLY, THANKS_REPLY, BYE_REPLY, ACK_REPLY})


def smalltalk_reply(message: str) -> str | None:
    """The reply to a message that asks nothing, or None for anything that may be a question.

    >>> smalltalk_reply("Hi there!") == GREETING_REPLY
    True
    >>> smalltalk_reply("thanks a lot") == THANKS_REPLY
    True
    >>> smalltalk_reply("hi, how do refunds work?") is None
    True
    """
    found = words(message)
    if not found or len(found) > 6 or ("?" in message and not set(found) <= _GREETING | _FILLER):
        return None
    kinds = [
        (_THANKS, THANKS_REPLY),
        (_BYE, BYE_REPLY),
        (_GREETING, GREETING_REPLY),
        (_ACK, ACK_REPLY),
    ]
    vocabulary = _FILLER.union(*(k for k, _ in kinds))
    if not set(found) <= vocabulary:
        return None
    for kind, reply in kinds:
        if kind & set(found):
            return reply
    return None
