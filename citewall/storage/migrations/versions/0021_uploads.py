"""Documents uploaded from the admin pages.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-03

``uploads`` holds one row per document in the uploads folder (its stored name, the uploaded
file's name, its url, licence and audiences, the cards its last ingest made and that run, who
uploaded it and when). ``kb_sources.kind`` admits ``uploads``, the registered source those
cards belong to. Downgrading drops the table; a registered uploads source is removed with its
kind (its runs stay, without it; its cards stay in the KB until a sync or `citewall ingest
--prune` removes them).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A frozen copy of the types as they were at this revision (models may move on).
TS = sa.DateTime(timezone=True)
JSON_T = sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
KINDS_BEFORE = "kind IN ('site', 'folder', 'cards', 'playbooks')"
KINDS_AFTER = "kind IN ('site', 'folder', 'cards', 'playbooks', 'uploads')"
KIND_CHECK = "ck_kb_sources_kind"


def _set_kinds(rule: str) -> None:
    # On SQLite the batch rebuild drops ``kb_sources``, and with foreign keys on that sets every
    # run's ``source_id`` to NULL (ON DELETE SET NULL): keep them aside and put them back.
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("CREATE TEMPORARY TABLE _runs_source AS SELECT id, source_id FROM ingest_runs")
    with op.batch_alter_table("kb_sources", recreate="always" if sqlite else "auto") as batch:
        batch.drop_constraint(op.f(KIND_CHECK), type_="check")
        batch.create_check_constraint(op.f(KIND_CHECK), rule)
    if sqlite:
        op.execute(
            "UPDATE ingest_runs SET source_id = (SELECT r.source_id FROM _runs_source r "
            "WHERE r.id = ingest_runs.id)"
        )
        op.execute("DROP TABLE _runs_source")


def upgrade() -> None:
    _set_kinds(KINDS_AFTER)
    op.create_table(
        "uploads",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("filename", sa.String(255), nullable=False),
        sa.Column("format", sa.String(16), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(2000), nullable=True),
        sa.Column("license", sa.Text(), nullable=True),
        sa.Column("audiences", JSON_T, nullable=False),
        sa.Column("card_ids", JSON_T, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("uploaded_by", sa.String(320), nullable=False),
        sa.Column("uploaded_by_user_id", sa.Integer(), nullable=True),
        sa.Column("uploaded_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_uploads"),
        sa.UniqueConstraint("name", name="uq_uploads_name"),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["ingest_runs.id"],
            name="fk_uploads_run_id_ingest_runs",
            ondelete="SET NULL",
        ),
    )


def downgrade() -> None:
    op.drop_table("uploads")
    op.execute("DELETE FROM kb_sources WHERE kind = 'uploads'")
    _set_kinds(KINDS_BEFORE)
