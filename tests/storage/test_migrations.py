"""Migrations: up from empty and down to base on SQLite and PostgreSQL; schema == models."""

from __future__ import annotations

import json

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, inspect, text

from citewall.errors import ConfigError, StorageError
from citewall.kb.card import Card
from citewall.storage.cards import UpsertCounts, card_hashes, get_card, upsert_cards
from citewall.storage.db import check_database, make_engine, make_session_factory
from citewall.storage.models import Base
from citewall.storage.schema import (
    current_revision,
    downgrade,
    head_revision,
    migrate,
    open_database,
)
from citewall.storage.sources import readable_sources

TABLES = {
    "users",
    "api_tokens",
    "conversations",
    "messages",
    "retrieval_events",
    "cards",
    "exposures",
    "exposure_reservations",
    "eval_questions",
    "feedback",
    "used_host_tokens",
    "kb_sources",
    "ingest_runs",
    "handoffs",
    "handoff_attempts",
    "audit_log",
    "erasures",
    "leases",
    "uploads",
}

#: What a downgrade must never empty (it drops only its own columns and tables).
KEPT_TABLES = ("users", "api_tokens", "conversations", "messages", "retrieval_events")


def insert_conversation(conn: Connection, now: str) -> None:
    """Member 1 and their conversation ``c``, as every revision since 0001 stores them."""
    conn.execute(
        text("INSERT INTO users (id, name, role, created_at) VALUES (1, 'm', 'member', :t)"),
        {"t": now},
    )
    conn.execute(
        text(
            "INSERT INTO conversations (id, user_id, title, created_at, updated_at) "
            "VALUES ('c', 1, 't', :t, :t)"
        ),
        {"t": now},
    )


def test_upgrade_from_empty_then_downgrade_to_base_and_back(fresh_database_url: str) -> None:
    engine = make_engine(fresh_database_url)
    try:
        assert current_revision(engine) is None
        assert not set(inspect(engine).get_table_names()) & TABLES

        migrate(fresh_database_url)
        assert current_revision(engine) == head_revision() == "0021"
        assert set(inspect(engine).get_table_names()) >= TABLES
        migrate(engine)  # idempotent
        assert current_revision(engine) == "0021"

        downgrade(engine)
        assert current_revision(engine) is None
        assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
        if engine.dialect.name == "sqlite":
            with engine.connect() as conn:
                leftovers = conn.execute(
                    text("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
                ).all()
            assert {r[0] for r in leftovers} <= {"alembic_version"}

        migrate(engine)
        assert current_revision(engine) == "0021"
    finally:
        engine.dispose()


def test_migrated_schema_matches_the_models(fresh_database_url: str) -> None:
    """Alembic's autogenerate sees no difference between the migration and the ORM models."""
    engine = make_engine(fresh_database_url)
    try:
        migrate(engine)
        with engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"compare_type": True})
            diff = compare_metadata(ctx, Base.metadata)
        assert diff == []
    finally:
        engine.dispose()


def test_json_columns_are_jsonb_on_postgresql(fresh_database_url: str) -> None:
    engine = make_engine(fresh_database_url)
    try:
        migrate(engine)
        columns = {c["name"]: c for c in inspect(engine).get_columns("messages")}
        type_name = type(columns["sources"]["type"]).__name__
        if engine.dialect.name == "postgresql":
            assert type_name == "JSONB"
            tz = {c["name"]: c for c in inspect(engine).get_columns("users")}["created_at"]
            assert tz["type"].timezone is True
        else:
            assert type_name == "JSON"
    finally:
        engine.dispose()


def test_open_database_migrates_and_names_the_database(fresh_database_url: str) -> None:
    db = open_database(fresh_database_url)
    try:
        assert current_revision(db.engine) == head_revision()
    finally:
        db.dispose()


def test_unreachable_postgresql_is_a_one_line_storage_error() -> None:
    engine = make_engine("postgresql+psycopg://postgres@127.0.0.1:1/nowhere")
    with pytest.raises(StorageError) as info:
        check_database(engine)
    message = str(info.value)
    assert "\n" not in message
    assert "127.0.0.1:1" in message and "nowhere" in message
    with pytest.raises(StorageError, match=r"127\.0\.0\.1:1"):
        migrate(engine)


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("not a url", "invalid database URL"),
        ("postgresql+psycopg://u@host:port/db", "invalid database URL"),
        ("mysql://u@h/db", "unsupported database 'mysql'"),
    ],
)
def test_malformed_urls_are_config_errors(url: str, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        make_engine(url)


def test_password_never_appears_in_errors() -> None:
    with pytest.raises(ConfigError) as info:
        make_engine("postgresql+psycopg://bob:s3cret@host:xx/db")
    assert "s3cret" not in str(info.value)
    engine = make_engine("postgresql+psycopg://bob:s3cret@127.0.0.1:1/db")
    with pytest.raises(StorageError) as info2:
        check_database(engine)
    assert "s3cret" not in str(info2.value)


def test_sqlite_creates_parent_dir_and_enables_wal_and_foreign_keys(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "a" / "b" / "citewall.db"
    engine = make_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as conn:
            assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
            assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert path.exists()
    finally:
        engine.dispose()


def test_concurrent_migrators_do_not_collide(fresh_database_url: str) -> None:
    """Several workers starting at once: one migrates, the others wait and find it done."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=3) as pool:
        list(pool.map(lambda _: migrate(fresh_database_url), range(3)))
    engine = make_engine(fresh_database_url)
    try:
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_0002_marks_earlier_assistant_messages_answered(fresh_database_url: str) -> None:
    """Rows written before answer statuses existed answered from the KB: they read back as
    ``answered``; user messages keep no status, and earlier events no query."""
    engine = make_engine(fresh_database_url)
    try:
        migrate(engine, revision="0001")
        now = "2026-11-29 10:00:00+00:00"
        with engine.begin() as conn:
            insert_conversation(conn, now)
            for seq, role in ((1, "user"), (2, "assistant")):
                conn.execute(
                    text(
                        "INSERT INTO messages (id, conversation_id, seq, role, content, sources,"
                        " timings, created_at) VALUES (:id, 'c', :seq, :role, 'x', '[]', '{}', :t)"
                    ),
                    {"id": f"m{seq}", "seq": seq, "role": role, "t": now},
                )
        migrate(engine)
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT role, answer_status, support FROM messages ORDER BY seq")
            ).all()
        assert [tuple(r) for r in rows] == [("user", None, None), ("assistant", "answered", None)]
    finally:
        engine.dispose()


def test_0004_keeps_earlier_rows_and_downgrades_to_0003_with_them(
    fresh_database_url: str,
) -> None:
    """Conversations and messages from before 0004 read back shown and not regenerated; a
    rating can be stored, one per member per answer; going back to 0003 keeps the turns."""
    engine = make_engine(fresh_database_url)
    try:
        migrate(engine, revision="0003")
        now = "2026-11-30 10:00:00+00:00"
        with engine.begin() as conn:
            insert_conversation(conn, now)
            conn.execute(
                text(
                    "INSERT INTO messages (id, conversation_id, seq, role, content, sources,"
                    " timings, created_at, answer_status) "
                    "VALUES ('a', 'c', 2, 'assistant', 'x', '[]', '{}', :t, 'answered')"
                ),
                {"t": now},
            )
        migrate(engine)
        with engine.begin() as conn:
            assert conn.execute(text("SELECT hidden_at FROM conversations")).all() == [(None,)]
            assert conn.execute(text("SELECT regenerated_from FROM messages")).all() == [(None,)]
            insert = text(
                "INSERT INTO feedback (message_id, user_id, rating, created_at, updated_at) "
                "VALUES ('a', 1, :r, :t, :t)"
            )
            conn.execute(insert, {"r": "up", "t": now})
        with pytest.raises(Exception, match=r"(?i)unique"), engine.begin() as conn:
            conn.execute(insert, {"r": "down", "t": now})
        with pytest.raises(Exception, match=r"(?i)check"), engine.begin() as conn:
            conn.execute(text("DELETE FROM feedback"))
            conn.execute(insert, {"r": "meh", "t": now})
        downgrade(engine, "0003")
        assert "feedback" not in inspect(engine).get_table_names()
        with engine.connect() as conn:
            assert conn.execute(text("SELECT id FROM messages")).all() == [("a",)]
            assert "hidden_at" not in {
                c["name"] for c in inspect(engine).get_columns("conversations")
            }
    finally:
        engine.dispose()


def test_downgrades_keep_the_stored_turns(fresh_database_url: str) -> None:
    """Going back a revision drops that revision's columns and tables, never other rows: on
    SQLite a rebuilt ``messages`` table would first delete its rows and, through the foreign
    keys, every retrieval event."""
    engine = make_engine(fresh_database_url)
    try:
        migrate(engine)
        now = "2026-11-30 10:00:00+00:00"
        with engine.begin() as conn:
            insert_conversation(conn, now)
            conn.execute(
                text(
                    "INSERT INTO messages (id, conversation_id, seq, role, content, sources,"
                    " timings, created_at) VALUES ('a', 'c', 2, 'assistant', 'x', '[]', '{}', :t)"
                ),
                {"t": now},
            )
            conn.execute(
                text(
                    "INSERT INTO retrieval_events (message_id, conversation_id, card_id,"
                    " final_rank, cited, is_external, created_at)"
                    " VALUES ('a', 'c', 'k', 1, true, false, :t)"
                ),
                {"t": now},
            )
            conn.execute(
                text(
                    "INSERT INTO api_tokens (user_id, token_hash, prefix, created_at)"
                    " VALUES (1, :h, 'cw_abcde', :t)"
                ),
                {"h": "0" * 64, "t": now},
            )
        for revision in ("0005", "0004", "0003", "0002", "0001"):
            downgrade(engine, revision)
            with engine.connect() as conn:
                rows = [
                    conn.execute(text(f"SELECT count(*) FROM {table}")).scalar()
                    for table in KEPT_TABLES
                ]
            assert rows == [1, 1, 1, 1, 1], revision
        migrate(engine)
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_0005_keeps_earlier_users_and_makes_issuer_subject_unique(fresh_database_url: str) -> None:
    """Users and tokens from before 0005 read back as CLI users with API tokens (no issuer, no
    expiry); an (issuer, subject) pair is unique while CLI users' NULL pairs never clash; going
    back to 0004 keeps every user, token and conversation."""
    engine = make_engine(fresh_database_url)
    try:
        migrate(engine, revision="0004")
        now = "2026-12-01 10:00:00+00:00"
        with engine.begin() as conn:
            for uid, name in ((1, "a"), (2, "b")):
                conn.execute(
                    text(
                        "INSERT INTO users (id, name, role, created_at) "
                        "VALUES (:id, :n, 'member', :t)"
                    ),
                    {"id": uid, "n": name, "t": now},
                )
            conn.execute(
                text(
                    "INSERT INTO api_tokens (user_id, token_hash, prefix, created_at)"
                    " VALUES (1, :h, 'cw_abcde', :t)"
                ),
                {"h": "1" * 64, "t": now},
            )
            conn.execute(
                text(
                    "INSERT INTO conversations (id, user_id, title, created_at, updated_at) "
                    "VALUES ('c', 1, 't', :t, :t)"
                ),
                {"t": now},
            )
        migrate(engine)
        with engine.begin() as conn:
            assert conn.execute(text("SELECT issuer, subject, email FROM users")).all() == [
                (None, None, None),
                (None, None, None),
            ]
            assert conn.execute(text("SELECT expires_at FROM api_tokens")).all() == [(None,)]
            insert = text(
                "INSERT INTO users (id, name, role, created_at, issuer, subject) "
                "VALUES (:id, :n, 'member', :t, 'https://host', '42')"
            )
            conn.execute(insert, {"id": 3, "n": "c", "t": now})
        with pytest.raises(Exception, match=r"(?i)unique"), engine.begin() as conn:
            conn.execute(insert, {"id": 4, "n": "d", "t": now})
        downgrade(engine, "0004")
        assert "issuer" not in {c["name"] for c in inspect(engine).get_columns("users")}
        assert "expires_at" not in {c["name"] for c in inspect(engine).get_columns("api_tokens")}
        with engine.connect() as conn:
            counts = [
                conn.execute(text(f"SELECT count(*) FROM {table}")).scalar()
                for table in ("users", "api_tokens", "conversations")
            ]
        assert counts == [3, 1, 1]
        migrate(engine)
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_0009_stores_replies_and_has_earlier_internal_cards_written_again(
    fresh_database_url: str,
) -> None:
    """Card rows from before 0009 read back with no reply; an internal one's hash is cleared, so
    the next ingest writes it again with its reply (an external one is left alone); going back
    to 0008 keeps the rows."""
    playbook = Card(id="pb", title="Late parcels", body="Log it in Helm.", reply="We credit you.")
    page = Card(id="page", title="Shipping", body="We ship.", url="https://help.example/ship")
    engine = make_engine(fresh_database_url)
    try:
        migrate(engine, revision="0008")
        insert = text(
            "INSERT INTO cards (id, title, body, url, metadata, content_hash, ingest_version,"
            " is_external, created_at, updated_at)"
            " VALUES (:id, :title, :body, :url, '{}', :hash, 1, :ext, :t, :t)"
        )
        with engine.begin() as conn:
            for card in (playbook, page):
                conn.execute(
                    insert,
                    {
                        "id": card.id,
                        "title": card.title,
                        "body": card.body,
                        "url": card.url,
                        "hash": card.content_hash(),
                        "ext": card.is_external,
                        "t": "2026-12-01 10:00:00+00:00",
                    },
                )
        migrate(engine)
        sessions = make_session_factory(engine)
        with sessions() as session:
            assert card_hashes(session) == {"pb": "", "page": page.content_hash()}
            assert upsert_cards(session, [playbook, page], 2) == UpsertCounts(
                updated=1, unchanged=1
            )
            row = get_card(session, "pb")
            assert row is not None and row.reply == "We credit you."
        downgrade(engine, "0008")
        assert "reply" not in {c["name"] for c in inspect(engine).get_columns("cards")}
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM cards")).scalar() == 2
        migrate(engine)
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_0010_rewrites_legacy_source_shapes_and_keeps_the_rest(fresh_database_url: str) -> None:
    """A source under ``id``, without ``n`` or with metadata as a JSON string is read as a
    stored source after 0010; today's shape and items that are not objects stay as they were."""
    today = {"n": 1, "card_id": "a", "metadata": {"url": "https://h.example/a"}}
    legacy = [
        {"id": "b", "title": "B", "metadata": {"url": "https://h.example/b"}},
        {"n": 3, "card_id": "c", "metadata": json.dumps({"url": "https://h.example/c"})},
        {"n": 4, "card_id": "d", "metadata": "{not json"},
        None,
        today,
    ]
    engine = make_engine(fresh_database_url)
    try:
        migrate(engine, revision="0009")
        now = "2026-11-29 10:00:00+00:00"
        with engine.begin() as conn:
            insert_conversation(conn, now)
            for seq, sources in ((1, legacy), (2, [today])):
                conn.execute(
                    text(
                        "INSERT INTO messages (id, conversation_id, seq, role, content, sources,"
                        " timings, created_at, dropped_markers)"
                        " VALUES (:id, 'c', :seq, 'assistant', 'x', :s, '{}', :t, 0)"
                    ),
                    {"id": f"m{seq}", "seq": seq, "s": json.dumps(sources), "t": now},
                )
        migrate(engine)
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT sources FROM messages ORDER BY seq")).scalars().all()
        stored = [json.loads(r) if isinstance(r, str) else r for r in rows]
        assert stored[0] == [
            {"title": "B", "metadata": {"url": "https://h.example/b"}, "card_id": "b", "n": 1},
            {"n": 3, "card_id": "c", "metadata": {"url": "https://h.example/c"}},
            {"n": 4, "card_id": "d", "metadata": {}},
            None,
            today,
        ]
        assert stored[1] == [today]
        assert [s.card_id for s in readable_sources(stored[0])] == ["b", "c", "d", "a"]
    finally:
        engine.dispose()


def test_0013_keeps_earlier_messages_whole_and_downgrades_to_0010_with_them(
    fresh_database_url: str,
) -> None:
    """Messages stored before the privacy revision keep their words (nothing is marked
    removed); downgrading drops the audit log, erasures and leases and keeps the messages."""
    engine = make_engine(fresh_database_url)
    try:
        migrate(engine, "0010")
        with engine.begin() as conn:
            conn.execute(
                text("INSERT INTO users (name, role, created_at) VALUES ('u', 'member', :t)"),
                {"t": "2026-01-01T00:00:00+00:00"},
            )
            user_id = conn.execute(text("SELECT id FROM users")).scalar_one()
            conn.execute(
                text(
                    "INSERT INTO conversations (id, user_id, title, created_at, updated_at) "
                    "VALUES ('c', :u, 't', :t, :t)"
                ),
                {"u": user_id, "t": "2026-01-01T00:00:00+00:00"},
            )
            conn.execute(
                text(
                    "INSERT INTO messages (id, conversation_id, seq, role, content, sources, "
                    "timings, dropped_markers, created_at) "
                    "VALUES ('m', 'c', 1, 'user', 'my words', '[]', '{}', 0, :t)"
                ),
                {"t": "2026-01-01T00:00:00+00:00"},
            )
        migrate(engine)
        with engine.connect() as conn:
            row = conn.execute(
                text("SELECT content, content_removed_at, coverage FROM messages")
            ).one()
        assert tuple(row) == ("my words", None, None)
        downgrade(engine, "0010")
        names = set(inspect(engine).get_table_names())
        assert not names & {"audit_log", "erasures", "leases"}
        with engine.connect() as conn:
            assert conn.execute(text("SELECT content FROM messages")).scalar_one() == "my words"
    finally:
        engine.dispose()


def test_0011_gives_earlier_cards_and_users_no_audience_and_keeps_them(
    fresh_database_url: str,
) -> None:
    """Cards and users from before 0011 are for every member / in no group; going back to
    0010 keeps them (and the user's tokens)."""
    engine = make_engine(fresh_database_url)
    try:
        migrate(engine, revision="0010")
        now = "2026-12-02 10:00:00+00:00"
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO users (id, name, role, created_at) VALUES (1, 'm', 'member', :t)"
                ),
                {"t": now},
            )
            conn.execute(
                text(
                    "INSERT INTO api_tokens (user_id, token_hash, prefix, created_at)"
                    " VALUES (1, :h, 'cw_abcde', :t)"
                ),
                {"h": "0" * 64, "t": now},
            )
            conn.execute(
                text(
                    "INSERT INTO cards (id, title, body, metadata, content_hash, ingest_version,"
                    " is_external, created_at, updated_at)"
                    " VALUES ('k', 'K', 'b', '{}', 'h', 1, false, :t, :t)"
                ),
                {"t": now},
            )
        migrate(engine)
        with make_session_factory(engine)() as session:
            assert get_card(session, "k").audiences == []  # type: ignore[union-attr]
            groups = session.execute(text("SELECT groups FROM users")).scalar()
            assert groups in ([], "[]")
        downgrade(engine, "0010")
        with engine.connect() as conn:
            counts = [
                conn.execute(text(f"SELECT count(*) FROM {t}")).scalar()
                for t in ("users", "api_tokens", "cards")
            ]
        assert counts == [1, 1, 1]
    finally:
        engine.dispose()
