"""Knowledge gaps: the questions the knowledge base did not answer well, grouped by topic.

An operator's to-write list. A question counts when retrieval ran for it (small talk does not
count) and its answer was ``not_found`` or answered with low support (``messages.support``
below ``low_support``: the best dense similarity between the query and any chunk). Questions
are grouped greedily by their content terms (``text.terms``): a question joins the first group
whose first question shares at least ``SIMILARITY`` of their terms (Jaccard), else starts a
group. Groups are ordered by size, then by how recently they were asked; each carries counts
per period.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, aliased

from citewall.storage.analytics import as_utc
from citewall.storage.failures import storage_errors
from citewall.storage.models import Message
from citewall.storage.questions import asks
from citewall.text.terms import content_terms

#: Jaccard similarity of content terms at which two questions are the same gap.
SIMILARITY = 0.5
#: Example questions kept per group.
EXAMPLES = 5
#: Questions read per request (newest first).
MAX_QUESTIONS = 5000

Period = Literal["day", "week", "month"]


@dataclass(frozen=True, slots=True)
class GapQuestion:
    message_id: str
    conversation_id: str
    question: str
    answer_status: str
    support: float | None
    asked_at: datetime


@dataclass(slots=True)
class GapGroup:
    """Similar questions: the first (newest) one names the group."""

    question: str
    terms: frozenset[str]
    count: int = 0
    not_found: int = 0
    low_support: int = 0
    last_asked: datetime | None = None
    examples: list[GapQuestion] = field(default_factory=list)
    per_period: Counter[str] = field(default_factory=Counter)


def period_start(when: datetime, period: Period) -> str:
    """The ISO date the period containing ``when`` (UTC) starts on; weeks start on Monday.

    >>> period_start(datetime(2026, 11, 26, 15, tzinfo=UTC), "week")
    '2026-11-23'
    """
    day = when.astimezone(UTC).date()
    if period == "week":
        day -= timedelta(days=day.weekday())
    elif period == "month":
        day = day.replace(day=1)
    return day.isoformat()


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Shared terms over all terms (1.0 for two empty sets).

    >>> jaccard(frozenset("ab"), frozenset("bc"))
    0.3333333333333333
    """
    return len(a & b) / len(a | b) if a or b else 1.0


def group_questions(
    questions: Sequence[GapQuestion], *, low_support: float, period: Period
) -> list[GapGroup]:
    """Group ``questions`` (newest first) by similar content terms; largest groups first."""
    groups: list[GapGroup] = []
    by_term: dict[str, list[int]] = {}  # term -> groups whose first question has it
    for q in questions:
        terms = frozenset(content_terms(q.question))
        # Only groups sharing a term can reach the similarity (or, for no terms, the empty
        # group); the first in creation order wins, as a scan of every group would pick.
        sharing = sorted({i for t in terms for i in by_term.get(t, ())})
        if not terms:
            sharing = [i for i, g in enumerate(groups) if not g.terms]
        found = next((i for i in sharing if jaccard(groups[i].terms, terms) >= SIMILARITY), None)
        if found is None:
            groups.append(GapGroup(question=q.question, terms=terms))
            found = len(groups) - 1
            for t in terms:
                by_term.setdefault(t, []).append(found)
        group = groups[found]
        group.count += 1
        if q.answer_status == "not_found":
            group.not_found += 1
        elif q.support is not None and q.support < low_support:
            group.low_support += 1
        if group.last_asked is None or q.asked_at > group.last_asked:
            group.last_asked = q.asked_at
        if len(group.examples) < EXAMPLES:
            group.examples.append(q)
        group.per_period[period_start(q.asked_at, period)] += 1
    epoch = datetime.min.replace(tzinfo=UTC)
    return sorted(groups, key=lambda g: (-g.count, -(g.last_asked or epoch).timestamp()))


def gap_questions(
    session: Session,
    *,
    low_support: float,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[GapQuestion]:
    """Questions answered ``not_found`` or with support below ``low_support``, newest first."""
    asked = aliased(Message)
    answer = Message
    conditions = [
        answer.role == "assistant",
        # Small talk is not_found with no support (nothing was retrieved): not a gap.
        answer.support.is_not(None),
        or_(answer.answer_status == "not_found", answer.support < low_support),
    ]
    since, until = as_utc(since), as_utc(until)
    if since is not None:
        conditions.append(answer.created_at >= since)
    if until is not None:
        conditions.append(answer.created_at < until)
    query = (
        select(
            answer.id,
            answer.conversation_id,
            asked.content,
            answer.answer_status,
            answer.support,
            answer.created_at,
        )
        .join(asked, asks(asked, answer))
        .where(*conditions)
        .order_by(answer.created_at.desc(), answer.id)
        .limit(MAX_QUESTIONS)
    )
    with storage_errors(session, "reading knowledge gaps"):
        rows = session.execute(query).all()
    return [
        GapQuestion(
            message_id=str(r[0]),
            conversation_id=str(r[1]),
            question=str(r[2]),
            answer_status=str(r[3] or "answered"),
            support=None if r[4] is None else float(r[4]),
            asked_at=r[5],
        )
        for r in rows
    ]
