"""Users signed in by a host site or an identity-aware proxy; sessions that expire.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02

``users.issuer`` and ``users.subject`` are the ``iss`` and ``sub`` of the signed token that
provisioned the user (both NULL for users made with ``citewall users add``); the pair is unique
(a unique index: NULLs never clash). ``users.email`` is the token's email claim when it had one.
``api_tokens.expires_at`` is when a session token ends (NULL: an API token, no expiry). Rows
written before this revision need no backfill.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A frozen copy of the types as they were at this revision (models may move on).
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    # Plain ALTER TABLE and CREATE INDEX (SQLite >= 3.35 adds and drops a plain column in
    # place): a batch rebuild of ``users`` would DROP the old table, and with foreign keys on
    # SQLite first delete its rows, cascading to every token, conversation and message.
    op.add_column("users", sa.Column("issuer", sa.String(255), nullable=True))
    op.add_column("users", sa.Column("subject", sa.String(255), nullable=True))
    op.add_column("users", sa.Column("email", sa.String(320), nullable=True))
    op.create_index("ix_users_issuer_subject", "users", ["issuer", "subject"], unique=True)
    op.add_column("api_tokens", sa.Column("expires_at", TS, nullable=True))


def downgrade() -> None:
    # In place, for the reason above; the index goes first (SQLite cannot drop an indexed column).
    op.drop_column("api_tokens", "expires_at")
    op.drop_index("ix_users_issuer_subject", table_name="users")
    op.drop_column("users", "email")
    op.drop_column("users", "subject")
    op.drop_column("users", "issuer")
