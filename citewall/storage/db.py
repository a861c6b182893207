"""Engines and sessions for SQLite and PostgreSQL, set up the way citewall needs them.

    engine = make_engine("sqlite:///data/citewall.db")
    check_database(engine)   # StorageError naming the database if it cannot be reached
    Session = make_session_factory(engine)

Schema migrations are ``storage.schema``; ``schema.open_database(url)`` does all of it.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from citewall.errors import ConfigError, StorageError
from citewall.storage.failures import failure_summary

#: Seconds to wait for PostgreSQL to accept a connection before calling it unreachable.
_PG_CONNECT_TIMEOUT_S = 5
#: Milliseconds a SQLite writer waits for the file lock before giving up.
_SQLITE_BUSY_TIMEOUT_MS = 10_000

# NaN/Infinity are not JSON: refuse them on both databases (PostgreSQL would reject them anyway).
_json_serializer = partial(json.dumps, ensure_ascii=False, allow_nan=False)


def parse_database_url(url: str) -> URL:
    """Parse and check a database URL; ``ConfigError`` names the bad value (password hidden)."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as exc:
        raise ConfigError(
            f"invalid database URL {_mask(url)!r}: {exc}; expected e.g. "
            "sqlite:///data/citewall.db or postgresql+psycopg://user@host:5432/dbname"
        ) from None
    backend = parsed.get_backend_name()
    if backend not in {"sqlite", "postgresql"}:
        raise ConfigError(
            f"unsupported database {backend!r} in {_mask(url)!r}; use sqlite or postgresql"
        )
    if backend == "postgresql" and parsed.drivername == "postgresql":
        # psycopg 3 is the driver citewall ships with; plain postgresql:// would mean psycopg2.
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def describe_database(url: URL | str) -> str:
    """A human name for a database, never including a password.

    >>> describe_database("postgresql+psycopg://bob:pw@db.example:5433/cw")
    'PostgreSQL database cw at db.example:5433 (user bob)'
    """
    parsed = make_url(url) if isinstance(url, str) else url
    if parsed.get_backend_name() == "sqlite":
        return f"SQLite database {parsed.database or ':memory:'}"
    host = parsed.host or "localhost"
    port = parsed.port or 5432
    user = f" (user {parsed.username})" if parsed.username else ""
    return f"PostgreSQL database {parsed.database or '(default)'} at {host}:{port}{user}"


def make_engine(url: str) -> Engine:
    """An engine for a SQLite or PostgreSQL URL, set up the way citewall needs it.

    SQLite: creates the file's parent directory, allows use across threads, turns on WAL,
    foreign keys and a busy timeout. PostgreSQL: pings pooled connections before use and
    gives up connecting after a few seconds. Raises ``ConfigError`` for a malformed URL.
    """
    parsed = parse_database_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(parsed)
    try:
        return create_engine(
            parsed,
            pool_pre_ping=True,
            connect_args={"connect_timeout": _PG_CONNECT_TIMEOUT_S},
            json_serializer=_json_serializer,
        )
    except (ArgumentError, ImportError) as exc:
        raise ConfigError(f"cannot use {describe_database(parsed)}: {exc}") from None


def _sqlite_engine(parsed: URL) -> Engine:
    database = parsed.database
    in_memory = not database or database == ":memory:"
    if not in_memory:
        path = Path(str(database)).expanduser()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create the directory for {path}: {exc}") from None
    engine = create_engine(
        parsed,
        connect_args={"check_same_thread": False},
        json_serializer=_json_serializer,
        # One shared connection is the only way an in-memory database outlives a checkout.
        **({"poolclass": StaticPool} if in_memory else {}),
    )

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={_SQLITE_BUSY_TIMEOUT_MS}")
            if not in_memory:
                # WAL lets readers (the API) proceed while a writer (ingest, a turn) commits.
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
        finally:
            cursor.close()

    return engine


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions whose objects stay readable after commit (repository functions commit)."""
    return sessionmaker(bind=engine, expire_on_commit=False)


def begin_write(session: Session) -> None:
    """Start the session's transaction as a writer, so read-then-write sequences are atomic.

    SQLite: ``BEGIN IMMEDIATE`` takes the write lock now (waiting up to the busy timeout), so
    two threads cannot both read ``max(seq)`` before either inserts. pysqlite would otherwise
    begin only at the first INSERT. PostgreSQL needs nothing here (callers lock rows with
    ``SELECT ... FOR UPDATE``). A no-op when a transaction is already under way.
    """
    connection = session.connection()
    if connection.dialect.name != "sqlite":
        return
    driver = connection.connection.driver_connection
    if driver is not None and not driver.in_transaction:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def check_database(engine: Engine) -> None:
    """Connect once; ``StorageError`` naming the database (never a traceback) if that fails."""
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        raise StorageError(
            f"cannot reach the {describe_database(engine.url)}: {failure_summary(exc)}"
        ) from None


def _mask(url: str) -> str:
    """The URL with any password replaced, for error messages (works on unparsable URLs too)."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    creds, _, host = rest.rpartition("@")
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}{':***' if ':' in creds else ''}@{host}"
