"""Registered KB sources and the history of their syncs.

Revision ID: 0016
Revises: 0014
Create Date: 2026-12-02

``kb_sources`` is the list of sources every replica syncs from (a site, a document folder, a
card file), with its schedule and the cards its last applied sync left in the KB;
``ingest_runs`` keeps every sync's counts, refusals and duration, also after its source is
removed. Downgrading drops both tables; the cards stay.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0016"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A frozen copy of the types as they were at this revision (models may move on).
TS = sa.DateTime(timezone=True)
JSON_T = sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    op.create_table(
        "kb_sources",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("location", sa.String(2000), nullable=False),
        sa.Column("license", sa.Text(), nullable=True),
        sa.Column("every_s", sa.Integer(), nullable=True),
        sa.Column("card_ids", JSON_T, nullable=False),
        sa.Column("failing", JSON_T, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("last_sync_at", TS, nullable=True),
        sa.Column("next_sync_at", TS, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_kb_sources"),
        sa.UniqueConstraint("kind", "location", name="uq_kb_sources_kind_location"),
        sa.CheckConstraint("kind IN ('site', 'folder', 'cards')", name="ck_kb_sources_kind"),
    )
    op.create_index("ix_kb_sources_next_sync_at", "kb_sources", ["next_sync_at"])
    op.create_table(
        "ingest_runs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=True),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("duration_s", sa.Double(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("added", sa.Integer(), nullable=False),
        sa.Column("updated", sa.Integer(), nullable=False),
        sa.Column("unchanged", sa.Integer(), nullable=False),
        sa.Column("removed", sa.Integer(), nullable=False),
        sa.Column("refused", sa.Integer(), nullable=False),
        sa.Column("refusals", JSON_T, nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("stale", JSON_T, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_ingest_runs"),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["kb_sources.id"],
            name="fk_ingest_runs_source_id_kb_sources",
            ondelete="SET NULL",
        ),
        sa.CheckConstraint("status IN ('applied', 'held', 'failed')", name="ck_ingest_runs_status"),
    )
    op.create_index("ix_ingest_runs_source_id", "ingest_runs", ["source_id"])


def downgrade() -> None:
    op.drop_index("ix_ingest_runs_source_id", "ingest_runs")
    op.drop_table("ingest_runs")
    op.drop_index("ix_kb_sources_next_sync_at", "kb_sources")
    op.drop_table("kb_sources")
