"""The only SQL that differs between SQLite and PostgreSQL: unnesting ``messages.sources`` and
``exposures.sentences`` (and finding the sources that still hold a ``span``), and truncating
a timestamp to the start of its day/week/month (in UTC).

Everything else in the analytics queries is portable SQLAlchemy Core. Both functions produce
expressions whose results are identical on the two databases (ISO date strings, text ids).
"""

from __future__ import annotations

from typing import Any, Literal

from sqlalchemy import Select, String, Subquery, and_, case, func, literal_column, select, true
from sqlalchemy.sql.elements import ColumnElement

from citewall.storage.models import Exposure, Message

Period = Literal["day", "week", "month", "all"]
PERIODS: tuple[Period, ...] = ("day", "week", "month", "all")


def cited_sources(dialect: str) -> Subquery:
    """One row per element of each assistant message's ``sources``:
    ``(message_id, created_at, card_id, source_url, title)``, the last three as text.

    SQLite: ``json_each`` + ``json_extract``; PostgreSQL: ``jsonb_array_elements`` + ``->>``
    (a set-returning function in FROM may refer to the table before it without LATERAL).
    """
    if dialect == "postgresql":
        elements = (
            func.jsonb_array_elements(Message.sources)
            .table_valued("value")
            .render_derived(name="src")
        )
        card_id: ColumnElement[Any] = elements.c.value.op("->>")("card_id")
        source_url: ColumnElement[Any] = elements.c.value.op("->>")("source_url")
        title: ColumnElement[Any] = elements.c.value.op("->>")("title")
    elif dialect == "sqlite":
        elements = func.json_each(Message.sources).table_valued("value", "type").alias("src")
        # json_extract returns SQL text for JSON strings, matching PostgreSQL's ->>; a non-object
        # element gives NULL there, so it must here too (json_extract would fail on it).
        is_object = elements.c.type == "object"
        card_id = case((is_object, func.json_extract(elements.c.value, "$.card_id")))
        source_url = case((is_object, func.json_extract(elements.c.value, "$.source_url")))
        title = case((is_object, func.json_extract(elements.c.value, "$.title")))
    else:  # pragma: no cover - make_engine refuses other databases
        raise ValueError(f"unsupported database dialect {dialect!r}")
    return (
        select(
            Message.id.label("message_id"),
            Message.created_at.label("created_at"),
            card_id.label("card_id"),
            source_url.label("source_url"),
            title.label("title"),
        )
        .select_from(Message)
        .join(elements, true())
        .where(Message.role == "assistant")
        .subquery("cited_sources")
    )


def spans_left(dialect: str) -> Select[Any]:
    """The conversations with an answer whose words were removed (``content_removed_at`` set)
    and one of whose stored sources still holds a non-null ``span`` (the answer sentence that
    cited it): what ``storage.content`` has still to remove there.

    Only object elements of a list count (as in ``cited_sources``); a JSON ``null`` span is no
    words. PostgreSQL: ``jsonb_array_elements`` + ``->>``; SQLite: ``json_each`` +
    ``json_extract``.
    """
    if dialect == "postgresql":
        as_array = case(
            (func.jsonb_typeof(Message.sources) == "array", Message.sources),
            else_=literal_column("'[]'::jsonb"),
        )
        elements = (
            func.jsonb_array_elements(as_array).table_valued("value").render_derived(name="src")
        )
        span: ColumnElement[Any] = case(
            (
                func.jsonb_typeof(elements.c.value) == "object",
                elements.c.value.op("->>")("span"),
            )
        )
    elif dialect == "sqlite":
        elements = func.json_each(Message.sources).table_valued("value", "type").alias("src")
        is_object = and_(func.json_type(Message.sources) == "array", elements.c.type == "object")
        span = case((is_object, func.json_extract(elements.c.value, "$.span")))
    else:  # pragma: no cover - make_engine refuses other databases
        raise ValueError(f"unsupported database dialect {dialect!r}")
    return (
        select(Message.conversation_id)
        .select_from(Message)
        .join(elements, true())
        .where(
            Message.role == "assistant",
            Message.content_removed_at.is_not(None),
            span.is_not(None),
        )
    )


def exposed_sentences(dialect: str) -> Subquery:
    """One row per sentence key in each exposure's ``sentences``:
    ``(user_id, message_id, card_id, created_at, sentence)``.

    Only strings count: a stored value that is not a list of keys (a hand edit, a legacy
    writer) adds nothing rather than failing the report. ``sentence`` is the JSON string on
    PostgreSQL and the text on SQLite: for counting distinct ``(card_id, sentence)`` pairs.
    """
    if dialect == "postgresql":
        as_array = case(
            (func.jsonb_typeof(Exposure.sentences) == "array", Exposure.sentences),
            else_=literal_column("'[]'::jsonb"),
        )
        elements = (
            func.jsonb_array_elements(as_array).table_valued("value").render_derived(name="sent")
        )
        is_key = func.jsonb_typeof(elements.c.value) == "string"
    elif dialect == "sqlite":
        elements = func.json_each(Exposure.sentences).table_valued("value", "type").alias("sent")
        # json_each walks a scalar as a one-element list; only a real list counts.
        is_key = and_(func.json_type(Exposure.sentences) == "array", elements.c.type == "text")
    else:  # pragma: no cover - make_engine refuses other databases
        raise ValueError(f"unsupported database dialect {dialect!r}")
    return (
        select(
            Exposure.user_id.label("user_id"),
            Exposure.message_id.label("message_id"),
            Exposure.card_id.label("card_id"),
            Exposure.created_at.label("created_at"),
            elements.c.value.label("sentence"),
        )
        .select_from(Exposure)
        .join(elements, true())
        .where(is_key)
        .subquery("exposed_sentences")
    )


def period_start(dialect: str, period: Period, column: Any) -> ColumnElement[str]:
    """``column`` (a UTC timestamp) truncated to its period, as text ``YYYY-MM-DD``.

    Weeks start on Monday (ISO 8601) on both databases. Not defined for ``"all"``.
    """
    if period == "all":
        raise ValueError("period 'all' has no period start")
    if dialect == "postgresql":
        # timezone('UTC', timestamptz) -> the UTC wall-clock time, whatever the session zone is.
        truncated = func.date_trunc(period, func.timezone("UTC", column))
        return func.to_char(truncated, "YYYY-MM-DD", type_=String)
    if dialect == "sqlite":
        # Stored as naive UTC text 'YYYY-MM-DD HH:MM:SS.ffffff', which date() understands.
        modifiers = {
            "day": (),
            # back 6 days, then forward to the next Monday = the Monday on or before the date
            "week": ("-6 days", "weekday 1"),
            "month": ("start of month",),
        }[period]
        return func.date(column, *modifiers, type_=String)
    raise ValueError(f"unsupported database dialect {dialect!r}")  # pragma: no cover
