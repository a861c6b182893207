"""Test questions saved from production ("Save as test question").

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02

``eval_questions`` holds the questions admins saved from a stored answer (a conversation turn,
a knowledge gap, a rated answer), with the cards that should have answered each one or
``unanswerable``; ``GET /api/v1/admin/eval-questions.jsonl`` exports them as the questions file
of ``citewall eval kb``. One row per answer (``message_id`` unique); when the answer goes, the
question stays with ``message_id`` NULL. A new table: nothing to backfill.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A frozen copy of the types as they were at this revision (models may move on).
TS = sa.DateTime(timezone=True)
JSON = sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    op.create_table(
        "eval_questions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("expected", JSON, nullable=False),
        sa.Column("unanswerable", sa.Boolean(), nullable=False),
        sa.Column("facts", JSON, nullable=False),
        sa.Column("conversation", JSON, nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("message_id", sa.String(36), nullable=True),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_eval_questions"),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name="fk_eval_questions_message_id_messages",
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["users.id"],
            name="fk_eval_questions_created_by_users",
            ondelete="SET NULL",
        ),
        sa.UniqueConstraint("message_id", name="uq_eval_questions_message_id"),
        sa.CheckConstraint(
            "source IN ('conversation', 'gap', 'feedback')", name="ck_eval_questions_source"
        ),
    )


def downgrade() -> None:
    op.drop_table("eval_questions")
