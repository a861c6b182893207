"""Retrieval-event log and entry-performance rollup, computed in SQL on SQLite and PostgreSQL.

``entry_performance`` is the rollup of decision 0004
(docs/decisions/0004-storage-and-entry-performance.md): per card (and per day/week/month if
asked) how often it was retrieved (``retrieval_events``) and how often an answer cited it
(unnesting the FULL ``messages.sources``, internal cards included), and how members rated the
answers that cited it (``feedback``). Counts and sums come from SQL; the ratios are divided and
rounded in Python from those integers, so both databases give identical rows. With
``audience``, every count is of the conversations of the members in that group (their groups
now, as the knowledge-gaps report counts them); each row names the card's audiences.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, case, distinct, func, literal, select, union
from sqlalchemy.orm import Session, aliased
from sqlalchemy.sql.elements import ColumnElement

from citewall.errors import UserError
from citewall.retrieval.types import HYBRID_PATHS, RETRIEVAL_RECORD_FIELDS
from citewall.storage.dialect import PERIODS, Period, cited_sources, period_start
from citewall.storage.failures import storage_errors
from citewall.storage.models import (
    CardRow,
    Conversation,
    Feedback,
    Handoff,
    Message,
    RetrievalEvent,
)
from citewall.storage.paging import check_page
from citewall.storage.users import audience_members

#: Decimal places of ``cite_rate``, ``mean_rank`` and ``helpful_rate``.
ROUND_DIGITS = 4
#: ``hybrid_path`` filter value selecting events with no path (nothing retrieved / unknown).
NO_PATH = "none"
PERFORMANCE_MAX_LIMIT = 100_000

EVENT_COLUMNS: tuple[str, ...] = (
    "id",
    "message_id",
    "conversation_id",
    *RETRIEVAL_RECORD_FIELDS,
    "query",
    "created_at",
)


def helpful_rate(up: int, down: int) -> float | None:
    """Thumbs up over all thumbs, rounded; None when nobody rated.

    >>> helpful_rate(3, 1), helpful_rate(0, 0)
    (0.75, None)
    """
    return round(up / (up + down), ROUND_DIGITS) if up + down else None


def as_utc(value: datetime | None) -> datetime | None:
    """Time bounds are UTC; a bound given without a zone is read as UTC (as the CLI does)."""
    if value is None or (value.tzinfo is not None and value.utcoffset() is not None):
        return value
    return value.replace(tzinfo=UTC)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def time_window(column: Any, since: datetime | None, until: datetime | None) -> list[Any]:
    """Conditions keeping ``column`` in the window: ``since`` inclusive, ``until`` exclusive."""
    conditions = []
    if since is not None:
        conditions.append(column >= since)
    if until is not None:
        conditions.append(column < until)
    return conditions


def retrieval_events(
    session: Session,
    *,
    card_id: str | None = None,
    hybrid_path: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    cited: bool | None = None,
    limit: int = 100,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """The retrieval-event log, newest first, as JSON-ready dicts (keys: ``EVENT_COLUMNS``;
    ``created_at`` is an ISO 8601 string in UTC). ``hybrid_path="none"`` selects events
    without a path. ``since`` is inclusive, ``until`` exclusive (UTC when naive)."""
    check_page(limit, offset)
    since, until = as_utc(since), as_utc(until)
    conditions = time_window(RetrievalEvent.created_at, since, until)
    if card_id is not None:
        conditions.append(RetrievalEvent.card_id == card_id)
    if hybrid_path == NO_PATH:
        conditions.append(RetrievalEvent.hybrid_path.is_(None))
    elif hybrid_path is not None:
        if hybrid_path not in HYBRID_PATHS:
            allowed = ", ".join((*HYBRID_PATHS, NO_PATH))
            raise UserError(f"unknown hybrid_path {hybrid_path!r}; allowed: {allowed}")
        conditions.append(RetrievalEvent.hybrid_path == hybrid_path)
    if cited is not None:
        conditions.append(RetrievalEvent.cited == cited)
    query = (
        select(RetrievalEvent)
        .where(*conditions)
        .order_by(RetrievalEvent.created_at.desc(), RetrievalEvent.id.desc())
        .limit(limit)
        .offset(offset)
    )
    with storage_errors(session, "reading retrieval events"):
        rows = list(session.scalars(query))
    return [event_dict(row) for row in rows]


def event_dict(row: RetrievalEvent) -> dict[str, Any]:
    """One stored retrieval event as a JSON-ready dict (keys: ``EVENT_COLUMNS``; ``created_at``
    an ISO 8601 string in UTC)."""
    item: dict[str, Any] = {name: getattr(row, name) for name in EVENT_COLUMNS}
    item["created_at"] = _iso(row.created_at)
    return item


def _as_bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def entry_performance(
    session: Session,
    *,
    period: Period = "all",
    since: datetime | None = None,
    until: datetime | None = None,
    card_id: str | None = None,
    audience: str | None = None,
    limit: int = 1000,
) -> list[dict[str, Any]]:
    """Per-card (and per-period) retrieval and citation counts; with ``audience``, of the
    conversations of the members whose groups (now) include it only.

    Rows: ``card_id``, ``period_start`` (``YYYY-MM-DD`` in UTC; None for ``"all"``; weeks start
    on Monday), ``times_retrieved`` (retrieval events), ``times_cited`` (assistant messages
    whose stored sources name the card), ``cite_rate`` (cited / retrieved, None if never
    retrieved), ``mean_rank`` (mean ``final_rank``, None if never retrieved), ``last_cited``
    (ISO 8601 UTC or None), ``is_external`` (catalogue, else events, else a source URL),
    ``helpful`` / ``unhelpful`` (thumbs up / down members gave the answers that cited the card,
    counted in the answer's period), ``helpful_rate`` (``helpful / (helpful + unhelpful)``,
    None if nobody rated), ``handoffs`` (requests for a person made in a conversation after
    an answer there cited the card, counted in that answer's period) and ``audiences`` (the
    card's groups in the catalogue now; empty: every member, or a card no longer there).
    Ordered by newest period, most cited, most retrieved, then card id.
    """
    if period not in PERIODS:
        raise UserError(f"unknown period {period!r}; allowed: {', '.join(PERIODS)}")
    check_page(limit, 0, max_limit=PERFORMANCE_MAX_LIMIT)
    since, until = as_utc(since), as_utc(until)
    dialect = session.get_bind().dialect.name
    grouped = period != "all"

    # -- retrievals per (card, period) ---------------------------------------------------------
    ev_period = (
        [period_start(dialect, period, RetrievalEvent.created_at).label("period_start")]
        if grouped
        else []
    )
    ev_filter = time_window(RetrievalEvent.created_at, since, until)
    if card_id is not None:
        ev_filter.append(RetrievalEvent.card_id == card_id)
    in_audience = None
    if audience is not None:
        with storage_errors(session, "computing entry performance"):
            members = audience_members(session, audience)
        if not members:
            return []
        in_audience = select(Conversation.id).where(Conversation.user_id.in_(members))
        ev_filter.append(RetrievalEvent.conversation_id.in_(in_audience))
    ev = (
        select(
            RetrievalEvent.card_id.label("card_id"),
            *ev_period,
            func.count().label("retrieved"),
            func.sum(RetrievalEvent.final_rank).label("rank_sum"),
            func.max(case((RetrievalEvent.is_external, 1), else_=0)).label("external"),
        )
        .where(*ev_filter)
        .group_by(RetrievalEvent.card_id, *ev_period)
        .subquery("ev")
    )

    # -- citations per (card, period), from the unnested stored sources --------------------------
    src = cited_sources(dialect)
    ci_period = (
        [period_start(dialect, period, src.c.created_at).label("period_start")] if grouped else []
    )
    ci_filter = [src.c.card_id.is_not(None), *time_window(src.c.created_at, since, until)]
    if card_id is not None:
        ci_filter.append(src.c.card_id == card_id)
    if in_audience is not None:
        answers = select(Message.id).where(Message.conversation_id.in_(in_audience))
        ci_filter.append(src.c.message_id.in_(answers))
    has_url = and_(src.c.source_url.is_not(None), src.c.source_url != literal(""))
    ci = (
        select(
            src.c.card_id.label("card_id"),
            *ci_period,
            func.count(distinct(src.c.message_id)).label("cited"),
            func.max(src.c.created_at).label("last_cited"),
            func.max(case((has_url, 1), else_=0)).label("external"),
        )
        .where(*ci_filter)
        .group_by(src.c.card_id, *ci_period)
        .subquery("ci")
    )

    # -- members' thumbs on the answers that cited the card (a subset of the citation keys) ------
    fb = (
        select(
            src.c.card_id.label("card_id"),
            *ci_period,
            func.count(distinct(case((Feedback.rating == "up", Feedback.id)))).label("helpful"),
            func.count(distinct(case((Feedback.rating == "down", Feedback.id)))).label("unhelpful"),
        )
        .select_from(src)
        .join(Feedback, Feedback.message_id == src.c.message_id)
        .where(*ci_filter)
        .group_by(src.c.card_id, *ci_period)
        .subquery("fb")
    )

    # -- requests for a person after an answer that cited the card (in that answer's period) -----
    citing = aliased(Message)
    ho = (
        select(
            src.c.card_id.label("card_id"),
            *ci_period,
            func.count(distinct(Handoff.id)).label("handoffs"),
        )
        .select_from(src)
        .join(citing, citing.id == src.c.message_id)
        .join(
            Handoff,
            and_(
                Handoff.conversation_id == citing.conversation_id,
                Handoff.created_at >= citing.created_at,
            ),
        )
        .where(*ci_filter)
        .group_by(src.c.card_id, *ci_period)
        .subquery("ho")
    )

    # -- every (card, period) seen by either side, joined back to both ---------------------------
    key_names = ["card_id", "period_start"] if grouped else ["card_id"]
    keys = union(
        select(*(ev.c[name] for name in key_names)), select(*(ci.c[name] for name in key_names))
    ).subquery("k")

    def joined(side: Any) -> ColumnElement[bool]:
        return and_(*(side.c[name] == keys.c[name] for name in key_names))

    period_col = keys.c.period_start if grouped else literal(None).label("period_start")
    query = (
        select(
            keys.c.card_id,
            period_col,
            func.coalesce(ev.c.retrieved, 0).label("retrieved"),
            ev.c.rank_sum,
            func.coalesce(ci.c.cited, 0).label("cited"),
            ci.c.last_cited,
            CardRow.is_external.label("catalogue_external"),
            ev.c.external.label("event_external"),
            ci.c.external.label("source_external"),
            func.coalesce(fb.c.helpful, 0).label("helpful"),
            func.coalesce(fb.c.unhelpful, 0).label("unhelpful"),
            func.coalesce(ho.c.handoffs, 0).label("handoffs"),
            CardRow.audiences.label("audiences"),
        )
        .select_from(keys)
        .outerjoin(ev, joined(ev))
        .outerjoin(ci, joined(ci))
        .outerjoin(fb, joined(fb))
        .outerjoin(ho, joined(ho))
        .outerjoin(CardRow, CardRow.id == keys.c.card_id)
        .order_by(
            *([keys.c.period_start.desc()] if grouped else []),
            func.coalesce(ci.c.cited, 0).desc(),
            func.coalesce(ev.c.retrieved, 0).desc(),
            keys.c.card_id,
        )
        .limit(limit)
    )
    with storage_errors(session, "computing entry performance"):
        rows = session.execute(query).all()
    return [_performance_row(row, grouped) for row in rows]


def _performance_row(row: Any, grouped: bool) -> dict[str, Any]:
    retrieved = int(row.retrieved)
    cited = int(row.cited)
    is_external = _as_bool(row.catalogue_external)
    if is_external is None:
        is_external = _as_bool(row.event_external)
    if is_external is None:
        is_external = bool(row.source_external)
    return {
        "card_id": row.card_id,
        "period_start": row.period_start if grouped else None,
        "times_retrieved": retrieved,
        "times_cited": cited,
        "cite_rate": round(cited / retrieved, ROUND_DIGITS) if retrieved else None,
        "mean_rank": round(int(row.rank_sum) / retrieved, ROUND_DIGITS) if retrieved else None,
        "last_cited": _iso(row.last_cited),
        "is_external": is_external,
        "helpful": int(row.helpful),
        "unhelpful": int(row.unhelpful),
        "helpful_rate": helpful_rate(int(row.helpful), int(row.unhelpful)),
        "handoffs": int(row.handoffs),
        "audiences": list(row.audiences or ()),
    }
