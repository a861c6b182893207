"""A conversation's title: the words of its first real question.

A greeting or other small talk ("hi", "hello there") asks nothing, so it names nothing: the
conversation keeps the neutral title until its first question, which then names it. A title
the member chose (or one a question gave) is never replaced.
"""

from __future__ import annotations

from citewall.chat.smalltalk import smalltalk_reply
from citewall.storage.conversations import short_title

#: The title of a conversation no question has named yet.
NEUTRAL_TITLE = "New conversation"
#: Conversation titles are the first words of the first question.
TITLE_CHARS = 80


def title_from(question: str) -> str:
    """A short conversation title from a question (whitespace collapsed, cut at a word).

    >>> title_from("  How   long\\ndo refunds take? ")
    'How long do refunds take?'
    """
    return short_title(question, TITLE_CHARS)


def first_title(message: str) -> str:
    """The title of a conversation that ``message`` opens.

    >>> first_title("hello there")
    'New conversation'
    >>> first_title("How do refunds work?")
    'How do refunds work?'
    """
    return NEUTRAL_TITLE if smalltalk_reply(message) is not None else title_from(message)


def next_title(current: str, message: str) -> str | None:
    """The title a conversation titled ``current`` takes when ``message`` is asked in it, or
    None to keep ``current`` (it is named already, or ``message`` is small talk).

    >>> next_title("New conversation", "hi")
    >>> next_title("New conversation", "Can I pause my plan?")
    'Can I pause my plan?'
    >>> next_title("Refunds", "Can I pause my plan?")
    """
    if current != NEUTRAL_TITLE:
        return None
    title = first_title(message)
    return None if title == NEUTRAL_TITLE else title
