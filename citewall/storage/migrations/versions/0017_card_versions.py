"""Playbooks written in the admin pages, their versions, and disabled cards.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02

``card_versions`` holds every saved version of a playbook (numbered from 1 per card; a
rollback is a new version). ``cards.disabled_at`` / ``disabled_by`` mark a card an admin
disabled: its row stays, its chunks leave every index. ``kb_sources.kind`` admits
``playbooks``, the registered source the admin-written cards belong to. Downgrading drops the
table and the columns; a registered playbooks source is removed with its kind.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A frozen copy of the types as they were at this revision (models may move on).
TS = sa.DateTime(timezone=True)
JSON_T = sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
KINDS_BEFORE = "kind IN ('site', 'folder', 'cards')"
KINDS_AFTER = "kind IN ('site', 'folder', 'cards', 'playbooks')"


#: The name 0016 gave the kind check (the naming convention applied to a name that had it).
NAME_BEFORE = "ck_kb_sources_ck_kb_sources_kind"
NAME_AFTER = "ck_kb_sources_kind"


def _set_kinds(rule: str, old_name: str, new_name: str) -> None:
    # On SQLite the batch rebuild drops ``kb_sources``, and with foreign keys on that sets every
    # run's ``source_id`` to NULL (ON DELETE SET NULL): keep them aside and put them back.
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("CREATE TEMPORARY TABLE _runs_source AS SELECT id, source_id FROM ingest_runs")
    with op.batch_alter_table("kb_sources", recreate="always" if sqlite else "auto") as batch:
        batch.drop_constraint(op.f(old_name), type_="check")
        batch.create_check_constraint(op.f(new_name), rule)
    if sqlite:
        op.execute(
            "UPDATE ingest_runs SET source_id = (SELECT r.source_id FROM _runs_source r "
            "WHERE r.id = ingest_runs.id)"
        )
        op.execute("DROP TABLE _runs_source")


def upgrade() -> None:
    op.create_table(
        "card_versions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("card_id", sa.String(200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("reply", sa.Text(), nullable=True),
        sa.Column("audiences", JSON_T, nullable=False),
        sa.Column("metadata", JSON_T, nullable=False),
        sa.Column("author", sa.String(320), nullable=False),
        sa.Column("author_user_id", sa.Integer(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("restored_from", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_card_versions"),
        sa.UniqueConstraint("card_id", "version", name="uq_card_versions_card_id_version"),
    )
    op.create_index("ix_card_versions_card_id", "card_versions", ["card_id"])
    with op.batch_alter_table("cards") as batch:
        batch.add_column(sa.Column("disabled_at", TS, nullable=True))
        batch.add_column(sa.Column("disabled_by", sa.String(320), nullable=True))
    _set_kinds(KINDS_AFTER, NAME_BEFORE, NAME_AFTER)


def downgrade() -> None:
    op.execute("DELETE FROM kb_sources WHERE kind = 'playbooks'")
    _set_kinds(KINDS_BEFORE, NAME_AFTER, NAME_BEFORE)
    op.drop_column("cards", "disabled_by")
    op.drop_column("cards", "disabled_at")
    op.drop_index("ix_card_versions_card_id", "card_versions")
    op.drop_table("card_versions")
