"""A real citewall over a small slice of the demo KB, for the reliability tests and scripts.

``build_rig`` ingests the first ``SMALL_KB_CARDS`` cards of ``kb/demo/cards.jsonl`` (the labels
topic: external help pages and internal playbooks) into a data dir, builds a real ``Runtime``
(embedded or server Chroma, SQLite or PostgreSQL, the packaged embedder, the extractive or an
OpenAI-compatible generator) and the app, and creates a member and an admin.

``turn_integrity_problems`` is the "nothing half-written" check every fault test ends with.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.engine import Engine

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_KB = REPO_ROOT / "kb" / "demo" / "cards.jsonl"
#: The labels topic of the demo KB: 7 external help pages, then 7 internal playbooks.
SMALL_KB_CARDS = 14
QUESTIONS = (
    "How do I void a label I did not use?",
    "My voided label refund still has not arrived, what now?",
    "Can I reprint a shipping label?",
    "A merchant was charged twice for the same label",
)


def write_small_kb(dest: Path, n: int = SMALL_KB_CARDS) -> Path:
    """The first ``n`` demo cards as a JSONL file at ``dest``."""
    lines = [ln for ln in DEMO_KB.read_text(encoding="utf-8").splitlines() if ln.strip()][:n]
    assert any(json.loads(ln).get("url") for ln in lines), "need external cards"
    assert any(not json.loads(ln).get("url") for ln in lines), "need internal cards"
    dest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest


def make_settings(data_dir: Path, **overrides: Any) -> Any:
    """Settings for a test server: no reranker, no rate limit, unless overridden."""
    from citewall.config import load_settings

    base: dict[str, Any] = {
        "data_dir": data_dir,
        "database_url": None,
        "chroma_url": None,
        "reranker_enabled": False,
        "rate_limit_per_minute": 0,
    }
    base.update(overrides)
    return load_settings(**base)


def ingest_kb(settings: Any, embedder: Any, kb: Path) -> Any:
    """Migrate the database and ingest ``kb`` into ``settings``' stores; the ingest report."""
    from citewall.ingest.pipeline import ingest_paths
    from citewall.storage import db, schema

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    schema.migrate(settings.sqlalchemy_url)
    engine = db.make_engine(settings.sqlalchemy_url)
    try:
        return ingest_paths(
            [kb],
            settings,
            embedder=embedder,
            session_factory=db.make_session_factory(engine),
            progress=False,
        )
    finally:
        engine.dispose()


def ingest_small_kb(settings: Any, embedder: Any) -> None:
    """Migrate the database and ingest the small KB into ``settings``' stores."""
    kb = write_small_kb(settings.data_dir.parent / f"kb-{uuid.uuid4().hex[:6]}.jsonl")
    report = ingest_kb(settings, embedder, kb)
    assert report.refused == 0 and report.added == SMALL_KB_CARDS, report.summary()


@dataclass
class Rig:
    """A running app over a real runtime with a member's and an admin's token."""

    runtime: Any
    app: Any
    client: TestClient
    tokens: dict[str, str]

    def auth(self, who: str = "member") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def chat(self, message: str = QUESTIONS[0], who: str = "member") -> Any:
        return self.client.post("/api/v1/chat", json={"message": message}, headers=self.auth(who))

    def stream(self, message: str = QUESTIONS[0], who: str = "member") -> Any:
        return self.client.post(
            "/api/v1/chat/stream", json={"message": message}, headers=self.auth(who)
        )

    def close(self) -> None:
        self.client.close()
        self.runtime.close()


def create_users(runtime: Any) -> dict[str, str]:
    """A member and an admin; returns their bearer tokens."""
    from citewall.storage import users

    tokens = {}
    with runtime.session_factory() as session:
        for who in ("member", "admin"):
            _, token = users.create_user(session, f"{who}-{uuid.uuid4().hex[:6]}", who)
            tokens[who] = token
    return tokens


def build_rig(
    data_dir: Path, embedder: Any, *, ingest: bool = True, reranker: Any = None, **overrides: Any
) -> Rig:
    """Ingest the small KB (unless ``ingest=False``) and start the app over a real runtime.

    ``reranker`` replaces the retriever's reranker (e.g. a real CrossEncoder) after start-up.
    """
    from citewall.api.app import create_app
    from citewall.runtime import Runtime

    settings = make_settings(data_dir, **overrides)
    if ingest:
        ingest_small_kb(settings, embedder)
    runtime = Runtime.from_settings(settings, embedder=embedder)
    if reranker is not None:
        runtime.retriever.reranker = reranker
        runtime.retriever.reranker_status = "given by the test"
    app = create_app(runtime)
    return Rig(runtime, app, TestClient(app, raise_server_exceptions=False), create_users(runtime))


def table_counts(engine: Engine) -> dict[str, int]:
    """Row counts of the turn tables."""
    with engine.connect() as conn:
        return {
            t: int(conn.execute(text(f"SELECT COUNT(*) FROM {t}")).scalar_one())
            for t in ("conversations", "messages", "retrieval_events")
        }


def turn_integrity_problems(engine: Engine) -> list[str]:
    """Every way a turn can be half-written, as readable lines (empty list: all whole).

    A whole turn is a user message at ``seq`` and an assistant message at ``seq + 1`` in the
    same conversation (a regenerated answer follows the answer it replaced instead), plus at
    least one retrieval event when the assistant message says something was retrieved
    (``hybrid_path`` not null); a conversation always has messages.
    """
    checks = {
        "assistant message without its user message": """
            SELECT a.id FROM messages a WHERE a.role = 'assistant' AND NOT EXISTS (
              SELECT 1 FROM messages u WHERE u.conversation_id = a.conversation_id
                AND u.seq = a.seq - 1
                AND (u.role = 'user' OR u.id = a.regenerated_from))""",
        "user message without its answer": """
            SELECT u.id FROM messages u WHERE u.role = 'user' AND NOT EXISTS (
              SELECT 1 FROM messages a WHERE a.conversation_id = u.conversation_id
                AND a.seq = u.seq + 1 AND a.role = 'assistant')""",
        "retrieved answer without retrieval events": """
            SELECT a.id FROM messages a WHERE a.role = 'assistant'
              AND a.hybrid_path IS NOT NULL AND NOT EXISTS (
              SELECT 1 FROM retrieval_events e WHERE e.message_id = a.id)""",
        "conversation without messages": """
            SELECT c.id FROM conversations c WHERE NOT EXISTS (
              SELECT 1 FROM messages m WHERE m.conversation_id = c.id)""",
    }
    problems = []
    with engine.connect() as conn:
        for what, sql in checks.items():
            ids = [str(r[0]) for r in conn.execute(text(sql))]
            problems += [f"{what}: {i}" for i in ids]
    return problems


def prepare_served_dir(data_dir: Path, embedder: Any) -> dict[str, str]:
    """A data dir a ``citewall serve`` subprocess can use: small KB ingested, users created.

    Returns the member's and admin's tokens. The server reads ``served_env(data_dir)``.
    """
    from citewall.storage import db

    settings = make_settings(data_dir)
    ingest_small_kb(settings, embedder)
    engine = db.make_engine(settings.sqlalchemy_url)
    try:
        from citewall.storage import users

        tokens = {}
        with db.make_session_factory(engine)() as session:
            for who in ("member", "admin"):
                _, token = users.create_user(session, f"{who}-{uuid.uuid4().hex[:6]}", who)
                tokens[who] = token
        return tokens
    finally:
        engine.dispose()


def served_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """Environment for ``citewall serve`` over ``data_dir`` (no reranker, no rate limit)."""
    return {
        "CITEWALL_DATA_DIR": str(data_dir),
        "CITEWALL_DATABASE_URL": "",
        "CITEWALL_CHROMA_URL": "",
        "CITEWALL_RERANKER_ENABLED": "false",
        "CITEWALL_RATE_LIMIT_PER_MINUTE": "0",
        "CITEWALL_LOG_LEVEL": "warning",
        "CITEWALL_GENERATOR": "extractive",
        **extra,
    }
