"""The KB's published artifacts in the database, shared by every replica.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

``kb_artifacts`` holds one row per published version of an artifact (``bm25``, ``sentences``):
its version name, the sha256 and size of its packed bytes. ``kb_artifact_parts`` holds those
bytes in parts (each far below PostgreSQL's 1 GB bytea limit), deleted with their version.
A database migrated to this revision holds no artifact until the next ingest pushes one.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A frozen copy of the types as they were at this revision (models may move on).
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "kb_artifacts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(32), nullable=False),
        sa.Column("version", sa.String(64), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_kb_artifacts"),
        sa.UniqueConstraint("name", "version", name="uq_kb_artifacts_name_version"),
    )
    op.create_table(
        "kb_artifact_parts",
        sa.Column("artifact_id", sa.Integer(), nullable=False),
        sa.Column("part", sa.Integer(), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("artifact_id", "part", name="pk_kb_artifact_parts"),
        sa.ForeignKeyConstraint(
            ["artifact_id"],
            ["kb_artifacts.id"],
            name="fk_kb_artifact_parts_artifact_id_kb_artifacts",
            ondelete="CASCADE",
        ),
    )


def downgrade() -> None:
    op.drop_table("kb_artifact_parts")
    op.drop_table("kb_artifacts")
