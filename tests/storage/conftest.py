"""Storage fixtures: a migrated database on SQLite and PostgreSQL, isolated per test.

PostgreSQL tests share the session's database (tests/conftest.py ``postgres_url``); every table
is truncated before each test so no test sees another's rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from builders import add_conversation, retrieval_record, saved_turn
from pgdb import temporary_database
from sqlalchemy import Engine, delete, text, update
from sqlalchemy.orm import Session, sessionmaker

from citewall.errors import NotFoundError
from citewall.storage.db import make_engine, make_session_factory
from citewall.storage.models import Base, Message, RetrievalEvent
from citewall.storage.schema import Database, migrate
from citewall.storage.users import create_user, get_user

TABLES = (
    "handoff_attempts",
    "handoffs",
    "feedback",
    "exposures",
    "retrieval_events",
    "messages",
    "conversations",
    "api_tokens",
    "users",
    "cards",
    "kb_artifact_parts",
    "kb_artifacts",
    "used_host_tokens",
    "audit_log",
    "erasures",
    "leases",
)


def clear_tables(engine: Engine) -> None:
    """Empty every citewall table (identities restarted on PostgreSQL)."""
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE"))
        else:
            for table in TABLES:
                conn.execute(delete(Base.metadata.tables[table]))


@pytest.fixture
def db(database_url: str) -> Iterator[Database]:
    """A migrated, empty database (SQLite file or the session's PostgreSQL database)."""
    engine = make_engine(database_url)
    migrate(engine)
    clear_tables(engine)
    yield Database(engine=engine, sessions=make_session_factory(engine))
    engine.dispose()


@pytest.fixture
def sessions(db: Database) -> sessionmaker[Session]:
    return db.sessions


@pytest.fixture
def session(db: Database) -> Iterator[Session]:
    with db.sessions() as s:
        yield s


@pytest.fixture
def backend(database_url: str) -> str:
    return "postgresql" if database_url.startswith("postgresql") else "sqlite"


@pytest.fixture
def fresh_database_url(database_url: str, tmp_path: Path) -> Iterator[str]:
    """An EMPTY database of the kind ``database_url`` names (for migration tests)."""
    if database_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'fresh' / 'citewall.db'}"
        return
    with temporary_database(database_url, "citewall_mig") as url:
        yield url


# -- analytics builders --------------------------------------------------------------------------

EXTERNAL_URL = "https://help.example/{card}"


def ensure_user(session: Session, name: str = "analyst") -> int:
    try:
        return get_user(session, name).id
    except NotFoundError:
        return create_user(session, name, "member")[0].id


def record_turn(
    session: Session,
    at: datetime,
    retrieved: Sequence[tuple[str, bool]],
    cited: Sequence[str],
    *,
    hybrid_path: str | None = "full",
    conversation_id: str | None = None,
    external_cited: Sequence[str] = (),
) -> str:
    """Save one turn whose context is ``retrieved`` (card id, is_external) in rank order and
    whose stored sources cite ``cited``; then move its rows to time ``at``. Returns the
    assistant message id."""
    if conversation_id is None:
        conversation_id = add_conversation(session, ensure_user(session)).id
    sources: list[dict[str, Any]] = []
    for n, card in enumerate(cited, start=1):
        external = card in external_cited or any(c == card and e for c, e in retrieved)
        sources.append(
            {
                "n": n,
                "card_id": card,
                "title": card.upper(),
                "text": f"text of {card}",
                "source_url": EXTERNAL_URL.format(card=card) if external else None,
                "metadata": {"content_hash": "0" * 64},
            }
        )
    events = [
        retrieval_record(
            card,
            rank,
            dense_rank=rank,
            dense_score=round(1 / rank, 6),
            rrf_rank=rank,
            rrf_score=1 / (60 + rank),
            hybrid_path=hybrid_path,
            cited=card in cited,
            is_external=external,
        )
        for rank, (card, external) in enumerate(retrieved, start=1)
    ]
    _, answer = saved_turn(
        session,
        conversation_id=conversation_id,
        question="q",
        answer_content=" ".join(f"[{s['n']}]" for s in sources) or "no answer",
        sources=sources,
        hybrid_path=hybrid_path,
        timings={},
        generator="extractive",
        dropped_markers=0,
        events=events,
    )
    session.execute(update(Message).where(Message.id == answer.id).values(created_at=at))
    session.execute(
        update(RetrievalEvent).where(RetrievalEvent.message_id == answer.id).values(created_at=at)
    )
    session.commit()
    return answer.id


@pytest.fixture
def record() -> Callable[..., str]:
    """``record(session, at, retrieved=[(card, is_external)...], cited=[card...])``."""
    return record_turn


@pytest.fixture
def clear() -> Callable[[Engine], None]:
    """``clear(engine)`` empties every citewall table (for tests managing their own engines)."""
    return clear_tables
