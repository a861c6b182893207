"""Limit/offset checks shared by the listing queries."""

from __future__ import annotations

from citewall.errors import UserError

#: The largest page any listing returns.
MAX_LIMIT = 1000


def check_page(limit: int, offset: int, *, max_limit: int = MAX_LIMIT) -> None:
    """``UserError`` naming the bad value unless ``1 <= limit <= max_limit`` and ``offset >= 0``."""
    if not 1 <= limit <= max_limit:
        raise UserError(f"limit must be between 1 and {max_limit}, got {limit}")
    if offset < 0:
        raise UserError(f"offset must be 0 or more, got {offset}")
