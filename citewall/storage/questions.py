"""Which question an answer answers: the conversation's last user message before it.

A turn stores the question right before its answer, but a regenerated answer follows the answer
it replaced, so "the message at ``seq - 1``" is not always the question. Every report that
shows an answer's question (knowledge gaps, exposure turns, feedback) joins with this.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.orm import aliased
from sqlalchemy.sql.elements import ColumnElement

from citewall.storage.models import Message


def asks(asked: Any, answer: Any) -> ColumnElement[bool]:
    """Join condition: ``asked`` (an alias of ``Message``) is the question ``answer`` (``Message``
    or an alias of it) answers, the last user message of its conversation before it."""
    earlier = aliased(Message)
    last_question = (
        select(func.max(earlier.seq))
        .where(
            earlier.conversation_id == answer.conversation_id,
            earlier.role == "user",
            earlier.seq < answer.seq,
        )
        .correlate(answer)
        .scalar_subquery()
    )
    return and_(
        asked.conversation_id == answer.conversation_id,
        asked.role == "user",
        asked.seq == last_question,
    )
