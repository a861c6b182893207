"""Knowledge gaps, and covered questions answered badly: two lists, grouped by topic.

A question counts when retrieval ran for it (small talk does not). ``retrieval.covered`` says
which list it belongs to: a **gap** (``not_found``, or answered although no retrieved card
covers the question's terms: the operator's to-write list) or **answered badly** (covered, but
rated "Not helpful" or answered with low support: the cards or retrieval to fix). Coverage is
computed here from the retrieval events of the turn (the cards retrieved, the query retrieval
ran with) and the cards as stored now (a card deleted since covers nothing).

Questions are grouped greedily by their content terms (``text.terms``): a question joins the
first group whose first question shares at least ``SIMILARITY`` of their terms (Jaccard), else
starts a group. Groups are ordered by size, then by how recently they were asked; each carries
counts per period and per reason.

``audience`` narrows either list to the questions of the members in one group (their groups
now, ``users.groups``): what that audience asks and its cards do not answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session, aliased

from citewall.retrieval.covered import VERDICT, Reason, TurnOutcome, TurnRule, Verdict, coverage
from citewall.storage.analytics import as_utc
from citewall.storage.failures import storage_errors
from citewall.storage.models import (
    CardRow,
    Conversation,
    Feedback,
    Message,
    RetrievalEvent,
    User,
)
from citewall.storage.questions import asks
from citewall.storage.removal import Removal, removed_by
from citewall.storage.users import audience_members
from citewall.text.terms import content_terms

#: Jaccard similarity of content terms at which two questions are the same gap.
SIMILARITY = 0.5
#: Example questions kept per group.
EXAMPLES = 5
#: Questions read per request (newest first).
MAX_QUESTIONS = 5000
#: Ids per ``IN (...)`` query (SQLite's bound-parameter limit is far above this).
_BATCH = 500

Period = Literal["day", "week", "month"]


@dataclass(frozen=True, slots=True)
class GapQuestion:
    message_id: str
    conversation_id: str
    question: str
    answer_status: str
    support: float | None
    asked_at: datetime
    #: Why it is listed (``retrieval.covered.Reason``); its list is ``VERDICT[reason]``.
    reason: Reason = "not_found"
    #: Best share of the question's terms one retrieved card holds (None: nothing retrieved).
    coverage: float | None = None
    rating: str | None = None
    #: Why the question's words are gone (None: they are stored).
    removed: Removal | None = None


@dataclass(slots=True)
class GapGroup:
    """Similar questions: the first (newest) one names the group."""

    question: str
    terms: frozenset[str]
    count: int = 0
    not_found: int = 0
    low_support: int = 0
    low_coverage: int = 0
    rated_down: int = 0
    last_asked: datetime | None = None
    examples: list[GapQuestion] = field(default_factory=list)
    per_period: Counter[str] = field(default_factory=Counter)
    #: The distinct conversations its questions were asked in, in the order first met.
    conversation_ids: dict[str, None] = field(default_factory=dict)


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


def group_questions(questions: Sequence[GapQuestion], *, period: Period) -> list[GapGroup]:
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
        group.not_found += q.reason == "not_found"
        group.low_coverage += q.reason == "low_coverage"
        group.rated_down += q.reason == "rated_down"
        group.low_support += q.reason == "low_support"
        if group.last_asked is None or q.asked_at > group.last_asked:
            group.last_asked = q.asked_at
        if len(group.examples) < EXAMPLES:
            group.examples.append(q)
        group.per_period[period_start(q.asked_at, period)] += 1
        group.conversation_ids.setdefault(q.conversation_id)
    epoch = datetime.min.replace(tzinfo=UTC)
    return sorted(groups, key=lambda g: (-g.count, -(g.last_asked or epoch).timestamp()))


def gap_questions(
    session: Session,
    *,
    rule: TurnRule,
    since: datetime | None = None,
    until: datetime | None = None,
    audience: str | None = None,
) -> dict[Verdict, list[GapQuestion]]:
    """The questions of ``[since, until)`` that ``rule`` lists, newest first, by list; with
    ``audience``, only those asked by members whose groups include it."""
    asked = aliased(Message)
    answer = Message
    conditions = [
        answer.role == "assistant",
        # Small talk is not_found with no support (nothing was retrieved): not a gap.
        answer.support.is_not(None),
    ]
    since, until = as_utc(since), as_utc(until)
    if since is not None:
        conditions.append(answer.created_at >= since)
    if until is not None:
        conditions.append(answer.created_at < until)
    out: dict[Verdict, list[GapQuestion]] = {"gap": [], "answered_badly": []}
    if audience is not None:
        with storage_errors(session, "reading knowledge gaps"):
            members = audience_members(session, audience)
        if not members:
            return out
        in_audience = select(Conversation.id).where(Conversation.user_id.in_(members))
        conditions.append(answer.conversation_id.in_(in_audience))
    query = (
        select(
            answer.id,
            answer.conversation_id,
            asked.content,
            answer.answer_status,
            answer.support,
            answer.created_at,
            answer.coverage,
            answer.content_removed_at,
            User.issuer,
        )
        .select_from(answer)
        .join(asked, asks(asked, answer))
        .join(Conversation, Conversation.id == answer.conversation_id)
        .join(User, User.id == Conversation.user_id)
        .where(*conditions)
        .order_by(answer.created_at.desc(), answer.id)
        .limit(MAX_QUESTIONS)
    )
    with storage_errors(session, "reading knowledge gaps"):
        rows = session.execute(query).all()
        ids = [str(r[0]) for r in rows]
        retrieved, queries = _retrieved(session, ids)
        ratings = _ratings(session, ids)
        terms = _card_terms(session, {c for cards in retrieved.values() for c in cards})
    for r in rows:
        message_id, question = str(r[0]), str(r[2])
        status = str(r[3] or "answered")
        support = None if r[4] is None else float(r[4])
        cards = retrieved.get(message_id, [])
        # An answer whose words retention removed kept the coverage it had then.
        covered = (
            float(r[6])
            if r[6] is not None
            else coverage(queries.get(message_id) or question, [terms.get(c, set()) for c in cards])
        )
        outcome = TurnOutcome(status, support, covered, ratings.get(message_id))
        reason = rule.reason(outcome)
        if reason is None:
            continue
        out[VERDICT[reason]].append(
            GapQuestion(
                message_id=message_id,
                conversation_id=str(r[1]),
                question=question,
                answer_status=status,
                support=support,
                asked_at=r[5],
                reason=reason,
                coverage=round(covered, 4) if cards else None,
                rating=outcome.rating,
                removed=removed_by(r[7], r[8]),
            )
        )
    return out


def turn_coverage(session: Session, answer_ids: Sequence[str]) -> dict[str, float]:
    """Per answer, the coverage ``gap_questions`` computes for it now (from its question, or the
    query retrieval ran with, and the cards retrieved for it as stored now): what retention
    freezes on the answer before removing the words it is computed from."""
    out: dict[str, float] = {}
    asked = aliased(Message)
    for batch in _in_batches(answer_ids):
        rows = session.execute(
            select(Message.id, asked.content)
            .join(asked, asks(asked, Message))
            .where(Message.id.in_(batch))
        ).all()
        retrieved, queries = _retrieved(session, [str(r[0]) for r in rows])
        terms = _card_terms(session, {c for cards in retrieved.values() for c in cards})
        for message_id, question in rows:
            cards = retrieved.get(str(message_id), [])
            out[str(message_id)] = coverage(
                queries.get(str(message_id)) or str(question), [terms.get(c, set()) for c in cards]
            )
    return out


def _in_batches(ids: Sequence[str]) -> list[Sequence[str]]:
    return [ids[i : i + _BATCH] for i in range(0, len(ids), _BATCH)]


def _retrieved(
    session: Session, message_ids: Sequence[str]
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Per answer, the cards retrieved for it (best first) and the query retrieval ran with."""
    cards: dict[str, list[str]] = {}
    queries: dict[str, str] = {}
    for batch in _in_batches(message_ids):
        rows = session.execute(
            select(RetrievalEvent.message_id, RetrievalEvent.card_id, RetrievalEvent.query)
            .where(RetrievalEvent.message_id.in_(batch))
            .order_by(RetrievalEvent.message_id, RetrievalEvent.final_rank)
        )
        for message_id, card_id, query in rows:
            cards.setdefault(str(message_id), []).append(str(card_id))
            if query:
                queries.setdefault(str(message_id), str(query))
    return cards, queries


def _ratings(session: Session, message_ids: Sequence[str]) -> dict[str, str]:
    """Per answer, ``down`` when any member rated it so, else ``up`` when rated."""
    out: dict[str, str] = {}
    for batch in _in_batches(message_ids):
        rows = session.execute(
            select(Feedback.message_id, Feedback.rating).where(Feedback.message_id.in_(batch))
        )
        for message_id, rating in rows:
            if out.get(str(message_id)) != "down":
                out[str(message_id)] = str(rating)
    return out


def _card_terms(session: Session, card_ids: set[str]) -> dict[str, set[str]]:
    """The content terms of each stored card (title and body)."""
    out: dict[str, set[str]] = {}
    for batch in _in_batches(sorted(card_ids)):
        rows = session.execute(
            select(CardRow.id, CardRow.title, CardRow.body).where(CardRow.id.in_(batch))
        )
        for card_id, title, body in rows:
            out[str(card_id)] = content_terms(f"{title} {body}")
    return out
