"""Host tokens already exchanged for a session, so each signs in once.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

``used_host_tokens`` holds one row per host token exchanged: ``token_key`` (a sha256 hex digest:
of the issuer and ``jti``, or of the signed part of a token without one) and ``expires_at``
(when the token stops verifying; later rows are purged). A database migrated to this revision
starts with no row: a host token exchanged before it may be exchanged once more within its
life (at most ``CITEWALL_MEMBER_JWT_MAX_LIFETIME_S``).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A frozen copy of the types as they were at this revision (models may move on).
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "used_host_tokens",
        sa.Column("token_key", sa.String(64), nullable=False),
        sa.Column("expires_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("token_key", name="pk_used_host_tokens"),
    )
    op.create_index("ix_used_host_tokens_expires_at", "used_host_tokens", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_used_host_tokens_expires_at", table_name="used_host_tokens")
    op.drop_table("used_host_tokens")
