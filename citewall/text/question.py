"""A question as citewall answers and stores it: cleaned once, where it enters.

A member's question enters through the request schemas (``api.schemas.ChatRequest``,
``AdminPreviewRequest``), an operator's through ``citewall ask``, a stored one is read back as
it was stored; each is cleaned there (``clean_question``) and carried as a ``CleanQuestion``,
which the turn (``chat.turn``) and the answer pipeline (``chat.pipeline``) take as it is.

>>> clean_question("  How do\\u200b refunds work?\\x07 ")
'How do refunds work?'
"""

from __future__ import annotations

from typing import NewType

from citewall.errors import UserError
from citewall.text.cleaning import clean_text

#: A question cleaned by ``clean_question`` (``clean_text``, stripped, not empty).
CleanQuestion = NewType("CleanQuestion", str)


def clean_question(question: str) -> CleanQuestion:
    """The question as the pipeline uses and stores it: ``clean_text``, stripped.

    ``UserError`` when nothing is left, e.g. for ``"\\u200b"``.
    """
    cleaned = clean_text(question).strip() if isinstance(question, str) else ""
    if not cleaned:
        raise UserError("the question is empty; ask something, e.g. 'How do refunds work?'")
    return CleanQuestion(cleaned)
