"""A throwaway PostgreSQL database for tests: created fresh, dropped (connections ended) after."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import create_engine, text


@contextmanager
def temporary_database(server_url: str, prefix: str = "citewall_test") -> Iterator[str]:
    """Yield the URL of a new, empty database on the server ``server_url`` points at.

    ``server_url`` is any database URL on that server (its database part is replaced by the
    maintenance database ``postgres`` to create and drop the new one).
    """
    base = server_url.rsplit("/", 1)[0]
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    admin = create_engine(f"{base}/postgres", isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        yield f"{base}/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = :n AND pid <> pg_backend_pid()"
                ),
                {"n": name},
            )
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        admin.dispose()
