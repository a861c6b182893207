"""The schema: Alembic migrations run programmatically, and opening a database at head.

Migrations are Alembic scripts shipped inside the package (``citewall/storage/migrations``), so
users never need an ``alembic.ini``::

    migrate(engine)                  # idempotent: a no-op when already at head
    database = open_database(url)    # engine, reachability check, migration, session factory

``open_database`` is what the CLI, the API and the demo call. Concurrent migrators (several
workers starting at once) queue on a lock: an advisory lock on PostgreSQL, SQLite's write lock.
"""

from __future__ import annotations

import fcntl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from citewall.errors import StorageError
from citewall.storage.db import check_database, describe_database, make_engine, make_session_factory
from citewall.storage.failures import failure_summary

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"

#: pg_advisory_xact_lock key serialising concurrent migrators (several workers starting at once).
_PG_MIGRATION_LOCK = 0x63697465  # "cite"


def _alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


@lru_cache(maxsize=1)
def head_revision() -> str:
    """The newest migration shipped with this version of citewall."""
    head = ScriptDirectory.from_config(_alembic_config()).get_current_head()
    assert head is not None, "citewall ships at least one migration"
    return head


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or None for an empty (never migrated) database."""
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    except SQLAlchemyError as exc:
        raise StorageError(
            f"cannot read the schema version of the {describe_database(engine.url)}: "
            f"{failure_summary(exc)}"
        ) from None


@contextmanager
def _engine_for(url_or_engine: str | Engine) -> Iterator[Engine]:
    if isinstance(url_or_engine, Engine):
        yield url_or_engine
        return
    engine = make_engine(url_or_engine)
    try:
        yield engine
    finally:
        engine.dispose()


def _locked_run(engine: Engine, action: str, run: Callable[[Config], None]) -> None:
    """Run an Alembic command in ONE transaction holding the migration lock, then commit."""
    try:
        with engine.connect() as conn:
            if conn.dialect.name == "postgresql":
                # DDL is transactional on PostgreSQL: a failed migration leaves nothing behind.
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
            else:
                # Take SQLite's write lock up front so DDL runs inside the transaction too
                # (pysqlite would otherwise autocommit each CREATE) and migrators queue up.
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            run(_alembic_config(conn))
            conn.commit()
    except CommandError as exc:
        raise StorageError(
            f"{action} of the {describe_database(engine.url)} failed: {exc}"
        ) from None
    except SQLAlchemyError as exc:
        raise StorageError(
            f"{action} of the {describe_database(engine.url)} failed: {failure_summary(exc)}"
        ) from None


@contextmanager
def _sqlite_file_lock(engine: Engine) -> Iterator[None]:
    """For a SQLite file, an exclusive lock on ``<file>.migrate-lock`` while the block runs.

    Migrators of a new SQLite file race before any transaction exists: one connection switching
    the file to WAL makes another's first read fail at once with "database is locked" (SQLite
    returns busy there without waiting). The file lock queues them, across threads and
    processes. PostgreSQL needs none (its migrators queue on an advisory lock).
    """
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        yield
        return
    lock_path = Path(f"{Path(database).expanduser()}.migrate-lock")
    try:
        handle = lock_path.open("a")
    except OSError:
        # A read-only directory: nobody can migrate this file, so there is nothing to queue
        # for; reading the schema version says what is wrong.
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def migrate(url_or_engine: str | Engine, revision: str = "head") -> None:
    """Upgrade the schema to ``revision`` (default: the newest). Safe to call at every start."""
    with _engine_for(url_or_engine) as engine, _sqlite_file_lock(engine):
        if revision == "head" and current_revision(engine) == head_revision():
            return  # the common case: already current
        _locked_run(engine, "migrating", lambda cfg: command.upgrade(cfg, revision))


def downgrade(url_or_engine: str | Engine, revision: str = "base") -> None:
    """Downgrade the schema to ``revision`` (default: ``base``, i.e. drop every citewall table)."""
    with _engine_for(url_or_engine) as engine, _sqlite_file_lock(engine):
        _locked_run(engine, "downgrading", lambda cfg: command.downgrade(cfg, revision))


@dataclass(frozen=True)
class Database:
    """An engine plus its session factory: what a process holds for its lifetime."""

    engine: Engine
    sessions: sessionmaker[Session]

    def dispose(self) -> None:
        self.engine.dispose()


def open_database(url: str, *, run_migrations: bool = True) -> Database:
    """Engine, reachability check and (by default) migration to head, in one call.

    Raises ``ConfigError`` for a malformed URL and ``StorageError`` for an unreachable
    database or a failed migration; both carry a one-line message naming the database.
    """
    engine = make_engine(url)
    try:
        check_database(engine)
        if run_migrations:
            migrate(engine)
    except Exception:
        engine.dispose()
        raise
    return Database(engine=engine, sessions=make_session_factory(engine))
