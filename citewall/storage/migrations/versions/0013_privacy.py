"""Members' data under control: the audit log, erasure requests, leases, removed content.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02

``audit_log`` is append-only (who read or changed which member's data, when, from where);
``erasures`` holds each erasure request and its receipt; ``leases`` names the one process
running retention across replicas. ``messages.content_removed_at`` marks a message whose words
retention or an erasure removed, and ``messages.coverage`` keeps the knowledge-gaps coverage
its question had then. Existing rows keep their content (both columns NULL). Downgrading drops
all of it; content already removed stays removed.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A frozen copy of the types as they were at this revision (models may move on).
TS = sa.DateTime(timezone=True)
JSON_T = sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("at", TS, nullable=False),
        sa.Column("actor", sa.String(320), nullable=False),
        sa.Column("actor_user_id", sa.Integer(), nullable=True),
        sa.Column("via", sa.String(16), nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("target", sa.String(255), nullable=False),
        sa.Column("address", sa.String(64), nullable=True),
        sa.Column("detail", JSON_T, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_audit_log"),
    )
    op.create_index("ix_audit_log_at", "audit_log", ["at"])
    op.create_index("ix_audit_log_action", "audit_log", ["action"])
    op.create_table(
        "erasures",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("requested_by", sa.String(320), nullable=False),
        sa.Column("requested_at", TS, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("completed_at", TS, nullable=True),
        sa.Column("receipt", JSON_T, nullable=False),
        sa.CheckConstraint("status IN ('requested', 'done')", name="ck_erasures_status"),
        sa.PrimaryKeyConstraint("id", name="pk_erasures"),
    )
    op.create_index("ix_erasures_user_id", "erasures", ["user_id"])
    op.create_table(
        "leases",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("holder", sa.String(100), nullable=False),
        sa.Column("expires_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_leases"),
    )
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("content_removed_at", TS, nullable=True))
        batch.add_column(sa.Column("coverage", sa.Double(), nullable=True))


def downgrade() -> None:
    # In place (SQLite >= 3.35): a batch rebuild of ``messages`` would drop the old table, which
    # with foreign keys on deletes every retrieval event first (cascade).
    op.drop_column("messages", "coverage")
    op.drop_column("messages", "content_removed_at")
    op.drop_table("leases")
    op.drop_index("ix_erasures_user_id", table_name="erasures")
    op.drop_table("erasures")
    op.drop_index("ix_audit_log_action", table_name="audit_log")
    op.drop_index("ix_audit_log_at", table_name="audit_log")
    op.drop_table("audit_log")
