"""Audiences on registered sources.

Revision ID: 0020
Revises: 0016
Create Date: 2026-12-02

``kb_sources.audiences`` holds the groups a source's cards are for (``citewall sources add
site URL --audience G``), applied at every sync as ``citewall ingest --site URL --audience G``
applies them. A JSON list, empty on the rows that exist before this revision, which is what
they meant then: the source's cards are for every member. Downgrading drops the column and
keeps the rows (the cards keep the audiences their last sync gave them).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0020"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON_T = sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    op.add_column(
        "kb_sources",
        sa.Column("audiences", JSON_T, server_default=sa.text("'[]'"), nullable=False),
    )


def downgrade() -> None:
    # Plain ALTER TABLE on SQLite too: a batch rebuild of ``kb_sources`` would, through the
    # foreign key, detach every run from its source.
    op.drop_column("kb_sources", "audiences")
