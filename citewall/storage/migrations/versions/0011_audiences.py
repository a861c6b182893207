"""Audiences on cards and groups on users.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02

``cards.audiences`` holds the groups a card is for (``citewall.kb.card.Card.audiences``; an
empty list: every member); ``users.groups`` a member's groups (from the host token's groups
claim at every sign-in, or ``citewall users groups``). Both are JSON lists, empty on the rows
that exist before this revision, which is what they meant then: every card is for every
member. Downgrading drops both columns and keeps the rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON_T = sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    # Plain ALTER TABLE on SQLite too: a batch rebuild of ``users`` would delete, through the
    # foreign keys, every token and conversation of its rows.
    op.add_column(
        "cards", sa.Column("audiences", JSON_T, server_default=sa.text("'[]'"), nullable=False)
    )
    op.add_column(
        "users", sa.Column("groups", JSON_T, server_default=sa.text("'[]'"), nullable=False)
    )


def downgrade() -> None:
    op.drop_column("users", "groups")
    op.drop_column("cards", "audiences")
