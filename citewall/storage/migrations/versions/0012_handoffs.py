"""Handoffs to a person: the outbox of requests delivered to the helpdesk, and their attempts.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02

``handoffs`` holds one row per member request, committed before any delivery is tried, with
the body every attempt sends and the lease a replica holds while it delivers;
``handoff_attempts`` one row per attempt. A database migrated to this revision holds none.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A frozen copy of the types as they were at this revision (models may move on).
JSON_T = sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "handoffs",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("conversation_id", sa.String(36), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("payload", JSON_T, nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", TS, nullable=False),
        sa.Column("lease_owner", sa.String(36), nullable=True),
        sa.Column("lease_until", TS, nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("delivered_at", TS, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_handoffs"),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name="fk_handoffs_conversation_id_conversations",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_handoffs_user_id_users", ondelete="CASCADE"
        ),
        sa.CheckConstraint(
            "status IN ('pending', 'delivered', 'failed')", name="ck_handoffs_status"
        ),
    )
    op.create_index("ix_handoffs_conversation_id", "handoffs", ["conversation_id"])
    op.create_index("ix_handoffs_user_id", "handoffs", ["user_id"])
    op.create_index("ix_handoffs_created_at", "handoffs", ["created_at"])
    op.create_index("ix_handoffs_status_next_attempt_at", "handoffs", ["status", "next_attempt_at"])
    op.create_table(
        "handoff_attempts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("handoff_id", sa.String(36), nullable=False),
        sa.Column("attempted_at", TS, nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("duration_ms", sa.Double(), nullable=False),
        sa.Column("replica", sa.String(36), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_handoff_attempts"),
        sa.ForeignKeyConstraint(
            ["handoff_id"],
            ["handoffs.id"],
            name="fk_handoff_attempts_handoff_id_handoffs",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_handoff_attempts_handoff_id", "handoff_attempts", ["handoff_id"])


def downgrade() -> None:
    op.drop_table("handoff_attempts")
    op.drop_table("handoffs")
