"""Resolution per group of conversations: per top card (the card retrieval ranked first for a
conversation's first answer that retrieved anything) and per knowledge-gap group (the grouping
of ``storage.gaps``, over the distinct conversations of the group's questions). The outcomes
are ``storage.resolution``'s, by the same SQL; docs/handoff.md, "Resolution"."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from citewall.retrieval.covered import GapRule, Verdict
from citewall.storage.analytics import as_utc, time_window
from citewall.storage.failures import storage_errors
from citewall.storage.gaps import GapGroup, gap_questions, group_questions
from citewall.storage.headline import rate
from citewall.storage.models import CardRow
from citewall.storage.paging import check_page
from citewall.storage.resolution import DECIDED, OUTCOMES, Outcome, conversation_outcomes

#: Ids per ``IN (...)`` query.
_BATCH = 500


@dataclass(frozen=True, slots=True)
class GroupResolution:
    """The outcomes of one group's conversations (a top card, or a knowledge-gap group)."""

    counts: dict[str, int]
    decided: int
    resolution_rate: float | None
    escalation_rate: float | None
    unresolved_rate: float | None
    abandoned_rate: float | None

    @classmethod
    def of(cls, counts: dict[str, int]) -> GroupResolution:
        decided = sum(counts[o] for o in DECIDED)
        return cls(
            counts=counts,
            decided=decided,
            resolution_rate=rate(counts["resolved"], decided),
            escalation_rate=rate(counts["escalated"], decided),
            unresolved_rate=rate(counts["unresolved"], decided),
            abandoned_rate=rate(counts["abandoned"], decided),
        )


@dataclass(frozen=True, slots=True)
class CardResolution:
    """The conversations one card was the top card of, by outcome (``title`` None: the card
    is no longer in the knowledge base)."""

    card_id: str
    title: str | None
    conversations: int
    outcomes: GroupResolution


def card_resolution(
    session: Session,
    *,
    now: datetime,
    window: timedelta,
    since: datetime | None = None,
    until: datetime | None = None,
    small_talk_replies: Collection[str] = (),
    limit: int = 50,
) -> list[CardResolution]:
    """Conversations begun in ``[since, until)`` by top card and outcome (at ``now``), the
    cards with most conversations first (then by id); conversations with no top card are left
    out."""
    check_page(limit, 0)
    outcomes = conversation_outcomes(now=now, window=window, small_talk_replies=small_talk_replies)
    card = outcomes.c.top_card_id
    query = (
        select(card, outcomes.c.outcome, func.count())
        .where(card.is_not(None), *time_window(outcomes.c.created_at, as_utc(since), as_utc(until)))
        .group_by(card, outcomes.c.outcome)
    )
    with storage_errors(session, "computing the resolution per card"):
        rows = session.execute(query).all()
        by_card: dict[str, dict[str, int]] = {}
        for card_id, outcome, n in rows:
            by_card.setdefault(str(card_id), {o: 0 for o in OUTCOMES})[str(outcome)] += int(n)
        ranked = sorted(by_card, key=lambda c: (-sum(by_card[c].values()), c))[:limit]
        titles = dict(
            session.execute(select(CardRow.id, CardRow.title).where(CardRow.id.in_(ranked))).all()
        )
    return [
        CardResolution(
            card_id=c,
            title=None if titles.get(c) is None else str(titles[c]),
            conversations=sum(by_card[c].values()),
            outcomes=GroupResolution.of(by_card[c]),
        )
        for c in ranked
    ]


def outcomes_of(
    session: Session,
    conversation_ids: Collection[str],
    *,
    now: datetime,
    window: timedelta,
    small_talk_replies: Collection[str] = (),
) -> dict[str, Outcome]:
    """The outcome (at ``now``) of each of ``conversation_ids`` that is stored."""
    outcomes = conversation_outcomes(now=now, window=window, small_talk_replies=small_talk_replies)
    ids = sorted(conversation_ids)
    out: dict[str, Outcome] = {}
    with storage_errors(session, "reading conversation outcomes"):
        for i in range(0, len(ids), _BATCH):
            query = select(outcomes.c.conversation_id, outcomes.c.outcome).where(
                outcomes.c.conversation_id.in_(ids[i : i + _BATCH])
            )
            for cid, outcome in session.execute(query):
                out[str(cid)] = outcome
    return out


@dataclass(frozen=True, slots=True)
class GapResolution:
    """A knowledge-gap group (``storage.gaps.GapGroup``: its list, ``verdict``, its naming
    question and count of questions) and the outcomes of its distinct conversations.
    ``group_id`` is the message id of the question naming it: the filter of
    ``gap_group_conversations`` (and of the conversations behind its numbers)."""

    verdict: Verdict
    group_id: str
    question: str
    questions: int
    conversations: int
    outcomes: GroupResolution


def gap_group_id(group: GapGroup) -> str:
    """The id a knowledge-gap group goes by: the message id of the (newest) question that
    names it. The same questions group the same way, so it names the group again for the same
    ``[since, until)``."""
    return group.examples[0].message_id


def _gap_groups(
    session: Session, *, rule: GapRule, since: datetime | None, until: datetime | None
) -> list[tuple[Verdict, GapGroup]]:
    """Both lists' groups of the questions asked in ``[since, until)``, as the knowledge-gaps
    report groups them (largest first within each list)."""
    found = gap_questions(session, rule=rule, since=since, until=until)
    verdicts: tuple[Verdict, ...] = ("gap", "answered_badly")
    return [(v, g) for v in verdicts for g in group_questions(found[v], period="week")]


def gap_group_conversations(
    session: Session,
    *,
    rule: GapRule,
    group_id: str,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[str] | None:
    """The distinct conversations of the knowledge-gap group ``group_id`` (``gap_group_id``)
    among the questions asked in ``[since, until)``; None when no group goes by that id."""
    for _, g in _gap_groups(session, rule=rule, since=since, until=until):
        if gap_group_id(g) == group_id:
            return list(g.conversation_ids)
    return None


def gap_resolution(
    session: Session,
    *,
    rule: GapRule,
    now: datetime,
    window: timedelta,
    since: datetime | None = None,
    until: datetime | None = None,
    small_talk_replies: Collection[str] = (),
    limit: int = 50,
) -> list[GapResolution]:
    """The knowledge-gap groups of the questions asked in ``[since, until)`` (both lists, as
    the knowledge-gaps report groups them, largest first, ``limit`` of each) with the outcomes
    of their conversations at ``now``."""
    check_page(limit, 0)
    groups: list[tuple[Verdict, GapGroup]] = []
    taken: Counter[str] = Counter()
    for verdict, g in _gap_groups(session, rule=rule, since=since, until=until):
        if taken[verdict] < limit:
            taken[verdict] += 1
            groups.append((verdict, g))
    outcome = outcomes_of(
        session,
        {c for _, g in groups for c in g.conversation_ids},
        now=now,
        window=window,
        small_talk_replies=small_talk_replies,
    )
    out: list[GapResolution] = []
    for verdict, g in groups:
        counts: dict[str, int] = {o: 0 for o in OUTCOMES}
        for c in g.conversation_ids:
            if c in outcome:
                counts[outcome[c]] += 1
        out.append(
            GapResolution(
                verdict=verdict,
                group_id=gap_group_id(g),
                question=g.question,
                questions=g.count,
                conversations=len(g.conversation_ids),
                outcomes=GroupResolution.of(counts),
            )
        )
    return out
