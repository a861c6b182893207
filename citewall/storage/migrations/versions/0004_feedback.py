"""Feedback on answers; hidden conversations; regenerated answers.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

``feedback`` holds one rating (``up`` or ``down``, with an optional comment) per member per
answer; a member rating the same answer again replaces the row. ``conversations.hidden_at`` is
when the member deleted the conversation from their list (NULL: shown): its turns, events and
exposures stay for analytics. ``messages.regenerated_from`` is the answer a regenerated answer
replaced (NULL for every other message). Rows written before this revision need no backfill.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A frozen copy of the types as they were at this revision (models may move on).
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "feedback",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("message_id", sa.String(36), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("rating", sa.String(8), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_feedback"),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name="fk_feedback_message_id_messages",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_feedback_user_id_users", ondelete="CASCADE"
        ),
        sa.UniqueConstraint("message_id", "user_id", name="uq_feedback_message_id_user_id"),
        sa.CheckConstraint("rating IN ('up', 'down')", name="ck_feedback_rating"),
    )
    op.create_index("ix_feedback_user_id", "feedback", ["user_id"])
    op.create_index("ix_feedback_updated_at", "feedback", ["updated_at"])
    # Plain ALTER TABLE (SQLite >= 3.35 adds and drops a plain column in place): a batch
    # rebuild would DROP the old table, and with foreign keys on SQLite first deletes its rows,
    # cascading to every message, event and exposure.
    op.add_column("conversations", sa.Column("hidden_at", TS, nullable=True))
    op.add_column("messages", sa.Column("regenerated_from", sa.String(36), nullable=True))


def downgrade() -> None:
    op.drop_column("messages", "regenerated_from")
    op.drop_column("conversations", "hidden_at")
    op.drop_table("feedback")
