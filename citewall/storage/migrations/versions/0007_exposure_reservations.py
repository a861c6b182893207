"""Exposure reservations: a turn's internal cards held against the budget while it answers.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

``exposure_reservations`` holds one row per internal card of a turn's context, written before
the answer is generated under the member's lock, so turns that run at the same moment count
each other's cards. The turn's save deletes its rows (its ``exposures`` rows take over); a turn
never stored leaves its rows to count until they leave the budget's window. A database
migrated to this revision holds no reservation.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A frozen copy of the types as they were at this revision (models may move on).
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "exposure_reservations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("reservation", sa.String(36), nullable=False),
        sa.Column("card_id", sa.String(200), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_exposure_reservations"),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name="fk_exposure_reservations_user_id_users",
            ondelete="CASCADE",
        ),
    )
    op.create_index(
        "ix_exposure_reservations_user_id_created_at",
        "exposure_reservations",
        ["user_id", "created_at"],
    )
    op.create_index(
        "ix_exposure_reservations_reservation", "exposure_reservations", ["reservation"]
    )


def downgrade() -> None:
    op.drop_table("exposure_reservations")
