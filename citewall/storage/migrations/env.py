"""Alembic environment for citewall. No alembic.ini: ``citewall.storage.schema.migrate`` builds the
config in code and hands over an open connection (inside the transaction that holds the
migration lock). Given only a URL (``alembic -x url=...`` from a checkout), it connects itself.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine, pool

from citewall.storage.models import Base

config = context.config
target_metadata = Base.metadata


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things; batch mode rebuilds tables for later migrations.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )


def run_migrations_offline() -> None:
    url = (
        config.get_main_option("sqlalchemy.url")
        or context.get_x_argument(as_dictionary=True)["url"]
    )
    context.configure(
        url=url,
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=url.startswith("sqlite"),
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    url = (
        config.get_main_option("sqlalchemy.url")
        or context.get_x_argument(as_dictionary=True)["url"]
    )
    engine = create_engine(url, poolclass=pool.NullPool)
    with engine.connect() as conn:
        _configure(conn)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
