"""A card's member-facing reply on its catalogue row.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02

``cards.reply`` is an internal card's member-facing part (``citewall.kb.card.Card.reply``: what
staff may tell the member, beside the staff notes in ``body``); NULL on external cards and on
internal cards without one. Rows written before this revision do not hold their reply, though
their ``content_hash`` already covers it, so the upgrade clears the hash of internal cards: the
next ingest sees them as changed and writes them again, reply included. Downgrading drops the
column and keeps the rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("cards") as batch:
        batch.add_column(sa.Column("reply", sa.Text(), nullable=True))
    op.execute(sa.text("UPDATE cards SET content_hash = '' WHERE NOT is_external"))


def downgrade() -> None:
    op.drop_column("cards", "reply")
