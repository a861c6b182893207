"""Exposure accounting: what internal knowledge reached each member, and restricted answers.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30

``exposures`` holds one row per internal card an answer cited or copied from, with the keys of
the card's sentences the answer repeated whole and the longest shared run of words.
``messages.restricted`` says why an answer was limited to external knowledge (the member's
exposure budget), NULL when it was not. Turns stored before this revision have no rows here.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A frozen copy of the types as they were at this revision (models may move on).
JSON_T = sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "exposures",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("message_id", sa.String(36), nullable=False),
        sa.Column("conversation_id", sa.String(36), nullable=False),
        sa.Column("card_id", sa.String(200), nullable=False),
        sa.Column("cited", sa.Boolean(), nullable=False),
        sa.Column("sentences", JSON_T, nullable=False),
        sa.Column("card_sentences", sa.Integer(), nullable=False),
        sa.Column("longest_span", sa.Integer(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_exposures"),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_exposures_user_id_users", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name="fk_exposures_message_id_messages",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name="fk_exposures_conversation_id_conversations",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_exposures_user_id_created_at", "exposures", ["user_id", "created_at"])
    op.create_index("ix_exposures_message_id", "exposures", ["message_id"])
    op.create_index("ix_exposures_conversation_id", "exposures", ["conversation_id"])
    op.create_index("ix_exposures_created_at", "exposures", ["created_at"])
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("restricted", sa.String(32), nullable=True))


def downgrade() -> None:
    # In place (SQLite >= 3.35): a batch rebuild of ``messages`` would drop the old table, which
    # with foreign keys on deletes every retrieval event and exposure first (cascade).
    op.drop_column("messages", "restricted")
    op.drop_table("exposures")
