"""Column types that behave the same on SQLite and PostgreSQL: JSON/JSONB and UTC timestamps."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, DateTime
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

#: JSONB on PostgreSQL (indexable, ``jsonb_array_elements``), JSON text on SQLite (``json_each``).
#: ``none_as_null`` keeps a Python ``None`` out of the column as SQL NULL, not JSON ``null``.
JSONType = JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def utcnow() -> datetime:
    """The current time, timezone-aware in UTC (the only kind of datetime storage accepts)."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp stored in UTC and always read back timezone-aware (UTC).

    PostgreSQL keeps it as ``timestamptz``; SQLite has no time zones, so the value is
    normalised to UTC and stored naive, then re-tagged as UTC on the way out. Naive input is
    refused: guessing a zone is how analytics drift by hours.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value.isoformat()} given; pass a UTC-aware one")
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):  # an aggregate (MAX) over SQLite text loses the column type
            value = datetime.fromisoformat(value)
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
