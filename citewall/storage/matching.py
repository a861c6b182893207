"""Case-insensitive substring filters, the same SQL on SQLite and PostgreSQL.

``lower(column) LIKE '%query%'`` with ``%``, ``_`` and ``\\`` in the query escaped, so a member
searching for "50%" finds "50%", not everything. SQLite's ``lower`` folds ASCII letters only;
PostgreSQL's folds every letter its collation knows.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func
from sqlalchemy.sql.elements import ColumnElement


def like_pattern(query: str) -> str:
    """The escaped, lower-cased ``LIKE`` pattern matching ``query`` anywhere.

    >>> like_pattern("50%_off")
    '%50\\\\%\\\\_off%'
    """
    escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped.lower()}%"


def contains_text(column: Any, query: str) -> ColumnElement[bool]:
    """``column`` contains ``query``, ignoring case."""
    return func.lower(column).like(like_pattern(query), escape="\\")
