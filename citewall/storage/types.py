"""Column types that behave the same on SQLite and PostgreSQL: JSON/JSONB, free text and UTC
timestamps.

Free text and JSON columns store any ``str`` they are handed: a lone surrogate or a NUL (which
neither database can hold) is made ``encodable`` on the way in, so a turn never fails on text.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, DateTime, String, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

from citewall.text.cleaning import encodable, encodable_json


class JSONType(TypeDecorator[Any]):
    """JSONB on PostgreSQL (indexable, ``jsonb_array_elements``), JSON text on SQLite
    (``json_each``); every string in the value (keys too) is stored ``encodable``.

    ``none_as_null`` keeps a Python ``None`` out of the column as SQL NULL, not JSON ``null``.
    """

    impl = JSON(none_as_null=True)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(JSONB(none_as_null=True))
        return dialect.type_descriptor(JSON(none_as_null=True))

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        return None if value is None else encodable_json(value)


class TextType(TypeDecorator[str]):
    """Free text of any length, stored ``encodable``."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else encodable(value)


class StringType(TypeDecorator[str]):
    """Free text up to ``length`` characters, stored ``encodable``."""

    impl = String
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else encodable(value)


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
        # An aggregate (MAX) over SQLite text loses the column type: it comes back as text.
        stamp: datetime = datetime.fromisoformat(value) if isinstance(value, str) else value
        if stamp.tzinfo is None:
            return stamp.replace(tzinfo=UTC)
        return stamp.astimezone(UTC)
