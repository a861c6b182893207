"""Handoff fixtures: a migrated, empty database on SQLite and PostgreSQL (the session's
PostgreSQL database, its tables emptied before each test)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, delete, text
from sqlalchemy.orm import Session

from citewall.storage.db import make_engine, make_session_factory
from citewall.storage.models import Base
from citewall.storage.schema import Database, migrate

#: What a handoff test writes, children first.
TABLES = ("handoff_attempts", "handoffs", "feedback", "messages", "conversations", "users")


def clear_tables(engine: Engine) -> None:
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE"))
        else:
            for table in TABLES:
                conn.execute(delete(Base.metadata.tables[table]))


@pytest.fixture
def db(database_url: str) -> Iterator[Database]:
    engine = make_engine(database_url)
    migrate(engine)
    clear_tables(engine)
    yield Database(engine=engine, sessions=make_session_factory(engine))
    engine.dispose()


@pytest.fixture
def session(db: Database) -> Iterator[Session]:
    with db.sessions() as s:
        yield s
