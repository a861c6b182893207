"""Exposure report: how much of the internal corpus reached each member, from ``exposures``.

The admin view of corpus protection (docs/distillation.md). Per member over a time window:
answers that drew on internal cards (``turns``), distinct internal cards (``cards``) and their
share of the internal catalogue, distinct internal sentences repeated verbatim (the union of
``(card_id, sentence key)`` over the member's rows), the longest run of words an answer
shared with a card, and the turns limited to external knowledge because the member's budget
was spent (``messages.restricted``, the admin alert). Counts come from SQL on SQLite and
PostgreSQL; times are UTC with ``since`` inclusive and ``until`` exclusive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, distinct, func, select, union
from sqlalchemy.orm import Session

from citewall.errors import NotFoundError
from citewall.storage.analytics import as_utc, time_window
from citewall.storage.dialect import exposed_sentences, period_start
from citewall.storage.exposure.answers import ExposureTurn, exposure_turns
from citewall.storage.failures import storage_errors
from citewall.storage.models import CardRow, Conversation, Exposure, Message, User
from citewall.storage.paging import check_page

#: Decimal places of ``corpus_share``.
ROUND_DIGITS = 4
#: User ids are 32-bit integers on PostgreSQL; a larger id names no user.
MAX_USER_ID = 2**31 - 1


@dataclass(frozen=True, slots=True)
class MemberExposure:
    """One member's exposure to internal cards over a window (zeros when there was none)."""

    user_id: int
    name: str
    role: str
    #: Assistant answers that drew on at least one internal card.
    turns: int
    #: Distinct internal cards those answers drew on.
    cards: int
    #: ``cards`` over the internal cards in the catalogue (None for an empty catalogue).
    corpus_share: float | None
    #: Distinct internal sentences the answers repeated whole.
    verbatim_sentences: int
    #: Longest run of words one answer shared with one card.
    longest_span: int
    first_exposed: datetime | None
    last_exposed: datetime | None
    #: Answers limited to external knowledge because the member's budget was spent.
    restricted_turns: int
    first_restricted: datetime | None


@dataclass(frozen=True, slots=True)
class ExposureRanking:
    internal_cards: int
    #: Members with exposure or restricted turns in the window (``rows`` holds the first).
    members: int
    rows: list[MemberExposure]


@dataclass(frozen=True, slots=True)
class ExposureDay:
    day: str
    cards: int
    verbatim_sentences: int
    turns: int
    restricted_turns: int


@dataclass(frozen=True, slots=True)
class MemberExposureReport:
    member: MemberExposure
    internal_cards: int
    #: Per UTC day with exposure or restricted turns, oldest first.
    days: list[ExposureDay]
    #: Turns in the window (``turns`` is one page of them, newest first).
    turns_total: int
    turns: list[ExposureTurn]


def internal_card_count(session: Session) -> int:
    """Internal cards in the catalogue: the corpus a member's exposure is a share of."""
    query = select(func.count()).select_from(CardRow).where(CardRow.is_external.is_(False))
    with storage_errors(session, "counting internal cards"):
        return int(session.scalar(query) or 0)


# -- per-member aggregates (subqueries keyed by user_id) -------------------------------------------


def _exposure_totals(conditions: Sequence[Any]) -> Any:
    return (
        select(
            Exposure.user_id.label("user_id"),
            func.count(distinct(Exposure.message_id)).label("turns"),
            func.count(distinct(Exposure.card_id)).label("cards"),
            func.max(Exposure.longest_span).label("longest_span"),
            func.min(Exposure.created_at).label("first_exposed"),
            func.max(Exposure.created_at).label("last_exposed"),
        )
        .where(*conditions)
        .group_by(Exposure.user_id)
        .subquery("exposed")
    )


def _verbatim_totals(
    dialect: str, since: datetime | None, until: datetime | None, user_id: int | None
) -> Any:
    sent = exposed_sentences(dialect)
    conditions = time_window(sent.c.created_at, since, until)
    if user_id is not None:
        conditions.append(sent.c.user_id == user_id)
    pairs = (
        select(sent.c.user_id, sent.c.card_id, sent.c.sentence)
        .where(*conditions)
        .distinct()
        .subquery("pairs")
    )
    return (
        select(pairs.c.user_id, func.count().label("verbatim"))
        .group_by(pairs.c.user_id)
        .subquery("verbatim")
    )


def _restricted_answers() -> Select[str, datetime, int]:
    """Assistant messages limited by the budget, with their owner's id as ``user_id``."""
    return (
        select(Message.id, Message.created_at, Conversation.user_id.label("user_id"))
        .join(Conversation, Conversation.id == Message.conversation_id)
        .where(Message.role == "assistant", Message.restricted.is_not(None))
    )


def _restricted_totals(since: datetime | None, until: datetime | None, user_id: int | None) -> Any:
    answers = _restricted_answers().where(*time_window(Message.created_at, since, until))
    if user_id is not None:
        answers = answers.where(Conversation.user_id == user_id)
    restricted = answers.subquery("restricted_answers")
    return (
        select(
            restricted.c.user_id,
            func.count().label("restricted"),
            func.min(restricted.c.created_at).label("first_restricted"),
        )
        .group_by(restricted.c.user_id)
        .subquery("restricted")
    )


def _member_rows(
    session: Session,
    since: datetime | None,
    until: datetime | None,
    *,
    user_id: int | None = None,
    limit: int | None = None,
) -> tuple[list[Any], int]:
    """Aggregated rows, ranked, and how many members had any (before ``limit``)."""
    dialect = session.get_bind().dialect.name
    exposure_filter = time_window(Exposure.created_at, since, until)
    if user_id is not None:
        exposure_filter.append(Exposure.user_id == user_id)
    exposed = _exposure_totals(exposure_filter)
    verbatim = _verbatim_totals(dialect, since, until, user_id)
    restricted = _restricted_totals(since, until, user_id)
    keys = union(select(exposed.c.user_id), select(restricted.c.user_id)).subquery("k")
    cards = func.coalesce(exposed.c.cards, 0)
    verbatim_count = func.coalesce(verbatim.c.verbatim, 0)
    turns = func.coalesce(exposed.c.turns, 0)
    restricted_count = func.coalesce(restricted.c.restricted, 0)
    query = (
        select(
            User.id,
            User.name,
            User.role,
            turns.label("turns"),
            cards.label("cards"),
            verbatim_count.label("verbatim"),
            func.coalesce(exposed.c.longest_span, 0).label("longest_span"),
            exposed.c.first_exposed,
            exposed.c.last_exposed,
            restricted_count.label("restricted"),
            restricted.c.first_restricted,
        )
        .select_from(keys)
        .join(User, User.id == keys.c.user_id)
        .outerjoin(exposed, exposed.c.user_id == keys.c.user_id)
        .outerjoin(verbatim, verbatim.c.user_id == keys.c.user_id)
        .outerjoin(restricted, restricted.c.user_id == keys.c.user_id)
        .order_by(
            cards.desc(), verbatim_count.desc(), turns.desc(), restricted_count.desc(), User.id
        )
    )
    count = select(func.count()).select_from(keys)
    with storage_errors(session, "computing exposure"):
        rows = list(session.execute(query.limit(limit)).all())
        total = len(rows) if user_id is not None else int(session.scalar(count) or 0)
    return rows, total


def _member(row: Any, internal_cards: int) -> MemberExposure:
    cards = int(row.cards)
    return MemberExposure(
        user_id=int(row.id),
        name=str(row.name),
        role=str(row.role),
        turns=int(row.turns),
        cards=cards,
        corpus_share=round(cards / internal_cards, ROUND_DIGITS) if internal_cards else None,
        verbatim_sentences=int(row.verbatim),
        longest_span=int(row.longest_span),
        first_exposed=row.first_exposed,
        last_exposed=row.last_exposed,
        restricted_turns=int(row.restricted),
        first_restricted=row.first_restricted,
    )


def _unexposed(user: User, internal_cards: int) -> MemberExposure:
    return MemberExposure(
        user_id=user.id,
        name=user.name,
        role=user.role,
        turns=0,
        cards=0,
        corpus_share=0.0 if internal_cards else None,
        verbatim_sentences=0,
        longest_span=0,
        first_exposed=None,
        last_exposed=None,
        restricted_turns=0,
        first_restricted=None,
    )


def exposure_ranking(
    session: Session,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int = 100,
) -> ExposureRanking:
    """Members ranked by internal exposure over ``[since, until)`` (UTC when naive): most
    distinct internal cards first, then most verbatim sentences, most turns, most restricted
    turns, then the oldest user (one order on both databases, whatever their collation).
    Members with neither exposure nor restricted turns in the window are left out.
    """
    check_page(limit, 0)
    since, until = as_utc(since), as_utc(until)
    internal = internal_card_count(session)
    rows, members = _member_rows(session, since, until, limit=limit)
    return ExposureRanking(internal, members, [_member(r, internal) for r in rows])


# -- one member's drill-down -----------------------------------------------------------------------


def _days(
    session: Session, user_id: int, since: datetime | None, until: datetime | None
) -> list[ExposureDay]:
    dialect = session.get_bind().dialect.name
    exp_day = period_start(dialect, "day", Exposure.created_at).label("day")
    exposed = (
        select(
            exp_day,
            func.count(distinct(Exposure.card_id)).label("cards"),
            func.count(distinct(Exposure.message_id)).label("turns"),
        )
        .where(Exposure.user_id == user_id, *time_window(Exposure.created_at, since, until))
        .group_by(exp_day)
        .subquery("exposed")
    )
    sent = exposed_sentences(dialect)
    sent_day = period_start(dialect, "day", sent.c.created_at).label("day")
    pairs = (
        select(sent_day, sent.c.card_id, sent.c.sentence)
        .where(sent.c.user_id == user_id, *time_window(sent.c.created_at, since, until))
        .distinct()
        .subquery("pairs")
    )
    verbatim = (
        select(pairs.c.day, func.count().label("verbatim")).group_by(pairs.c.day).subquery("v")
    )
    answers = (
        _restricted_answers()
        .where(Conversation.user_id == user_id, *time_window(Message.created_at, since, until))
        .subquery("answers")
    )
    res_day = period_start(dialect, "day", answers.c.created_at).label("day")
    restricted = select(res_day, func.count().label("restricted")).group_by(res_day).subquery("r")
    keys = union(select(exposed.c.day), select(restricted.c.day)).subquery("k")
    query = (
        select(
            keys.c.day,
            func.coalesce(exposed.c.cards, 0),
            func.coalesce(verbatim.c.verbatim, 0),
            func.coalesce(exposed.c.turns, 0),
            func.coalesce(restricted.c.restricted, 0),
        )
        .select_from(keys)
        .outerjoin(exposed, exposed.c.day == keys.c.day)
        .outerjoin(verbatim, verbatim.c.day == keys.c.day)
        .outerjoin(restricted, restricted.c.day == keys.c.day)
        .order_by(keys.c.day)
    )
    with storage_errors(session, "computing exposure per day"):
        rows = session.execute(query).all()
    return [ExposureDay(str(d), int(c), int(v), int(t), int(r)) for d, c, v, t, r in rows]


def member_exposure(
    session: Session,
    user_id: int,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int = 50,
    offset: int = 0,
) -> MemberExposureReport:
    """One member's exposure over ``[since, until)``: totals, per UTC day, and the turns
    (answers with exposure or restricted by the budget), newest first, one page of them.
    ``NotFoundError`` if there is no such user."""
    check_page(limit, offset)
    since, until = as_utc(since), as_utc(until)
    user = None
    if 1 <= user_id <= MAX_USER_ID:
        with storage_errors(session, "reading the user"):
            user = session.get(User, user_id)
    if user is None:
        raise NotFoundError(f"user {user_id} not found")
    internal = internal_card_count(session)
    rows, _ = _member_rows(session, since, until, user_id=user_id)
    member = _member(rows[0], internal) if rows else _unexposed(user, internal)
    turns, total = exposure_turns(session, user_id, since, until, limit, offset)
    return MemberExposureReport(
        member=member,
        internal_cards=internal,
        days=_days(session, user_id, since, until),
        turns_total=total,
        turns=turns,
    )
