"""Answer status and support on assistant messages; the retrieval query on retrieval events.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30

``messages.answer_status`` is ``answered`` or ``not_found`` on assistant messages (NULL on
user messages); assistant rows written before this revision answered from the knowledge base
and are marked ``answered``. ``messages.support`` is the answerability signal the answer was
decided on (NULL before). ``retrieval_events.query`` is the text retrieval ran with, which for a
follow-up question includes the earlier question it leans on (NULL before).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("answer_status", sa.String(16), nullable=True))
        batch.add_column(sa.Column("support", sa.Double(), nullable=True))
    op.execute("UPDATE messages SET answer_status = 'answered' WHERE role = 'assistant'")
    op.create_index(
        "ix_messages_answer_status_created_at", "messages", ["answer_status", "created_at"]
    )
    with op.batch_alter_table("retrieval_events") as batch:
        batch.add_column(sa.Column("query", sa.Text(), nullable=True))


def downgrade() -> None:
    # In place (SQLite >= 3.35): a batch rebuild of ``messages`` would drop the old table, which
    # with foreign keys on deletes every retrieval event first (cascade).
    op.drop_column("retrieval_events", "query")
    op.drop_index("ix_messages_answer_status_created_at", table_name="messages")
    op.drop_column("messages", "support")
    op.drop_column("messages", "answer_status")
