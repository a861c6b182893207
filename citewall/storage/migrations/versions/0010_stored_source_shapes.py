"""Stored sources in today's shape only: ``card_id`` and ``metadata`` as an object.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02

A reader validates ``messages.sources`` once, against ``storage.sources.StoredSource``, and no
longer guesses at older shapes. This data migration rewrites the two that earlier writers could
leave: a source naming its card under ``id`` instead of ``card_id``, one without its context
number ``n`` (it takes its place in the list, from 1), and ``metadata`` stored as a JSON
string (it becomes the object, or ``{}`` when it is not one). Items that are not
objects are left as they are (the admin view shows them as unreadable). Rows in today's shape
are not touched. The downgrade changes nothing: the rewritten rows were readable before too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def current_shape(source: Any, place: int) -> Any:
    """``source`` (the ``place``-th of its list) with ``card_id``, ``n`` and object
    ``metadata`` (anything but an object: as is)."""
    if not isinstance(source, dict):
        return source
    fixed = dict(source)
    if "card_id" not in fixed and isinstance(fixed.get("id"), str):
        fixed["card_id"] = fixed.pop("id")
    if "n" not in fixed and "card_id" in fixed:
        fixed["n"] = place
    metadata = fixed.get("metadata")
    if isinstance(metadata, str):
        try:
            parsed = json.loads(metadata)
        except ValueError:
            parsed = {}
        fixed["metadata"] = parsed if isinstance(parsed, dict) else {}
    return fixed


def upgrade() -> None:
    bind = op.get_bind()
    json_type = JSONB() if bind.dialect.name == "postgresql" else sa.JSON()
    messages = sa.table("messages", sa.column("id", sa.String()), sa.column("sources", json_type))
    rows = bind.execute(sa.select(messages.c.id, messages.c.sources)).all()
    for message_id, sources in rows:
        if not isinstance(sources, list):
            continue
        fixed = [current_shape(s, i) for i, s in enumerate(sources, start=1)]
        if fixed != sources:
            bind.execute(messages.update().where(messages.c.id == message_id).values(sources=fixed))


def downgrade() -> None:
    pass
