"""`citewall analytics`: JSON and tables from the real rollup; clear errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from builders import retrieval_record, saved_turn
from sqlalchemy import text
from typer.testing import CliRunner, Result

from citewall.cli.analytics import parse_when
from citewall.cli.main import app
from citewall.config import get_settings
from citewall.errors import UserError
from citewall.storage.db import make_engine, make_session_factory
from citewall.storage.models import new_uuid
from citewall.storage.schema import migrate
from citewall.storage.turns import NewConversation
from citewall.storage.users import create_user


@pytest.fixture
def sqlite_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CliRunner]:
    """A fresh SQLite database (via CITEWALL_DATA_DIR) with one recorded turn."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CITEWALL_DATABASE_URL", raising=False)
    monkeypatch.setenv("CITEWALL_DATA_DIR", str(tmp_path / "data"))
    url = f"sqlite:///{tmp_path / 'data' / 'citewall.db'}"
    engine = make_engine(url)
    migrate(engine)
    with make_session_factory(engine)() as session:
        user, _ = create_user(session, "alice", "member")
        saved_turn(
            session,
            conversation_id=new_uuid(),
            new_conversation=NewConversation(user.id, "t"),
            question="q",
            answer_content="Refunds take 5 days [1].",
            sources=[{"n": 1, "card_id": "refunds", "source_url": "https://h.example/r"}],
            hybrid_path="rrf_only",
            timings={},
            generator="extractive",
            dropped_markers=0,
            events=[
                retrieval_record(
                    "refunds",
                    1,
                    cited=True,
                    is_external=True,
                    hybrid_path="rrf_only",
                    rrf_score=0.016393,
                ),
                retrieval_record("playbook", 2, hybrid_path="rrf_only"),
            ],
        )
    engine.dispose()
    get_settings.cache_clear()
    yield CliRunner()
    get_settings.cache_clear()


def run(runner: CliRunner, *args: str) -> Result:
    get_settings.cache_clear()
    return runner.invoke(app, list(args))


def test_performance_json_and_table(sqlite_cli: CliRunner) -> None:
    result = run(sqlite_cli, "analytics", "performance", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [
        (r["card_id"], r["times_retrieved"], r["times_cited"], r["cite_rate"]) for r in rows
    ] == [
        ("refunds", 1, 1, 1.0),
        ("playbook", 1, 0, 0.0),
    ]
    day = json.loads(
        run(sqlite_cli, "analytics", "performance", "--period", "day", "--json").stdout
    )
    assert day[0]["period_start"] == datetime.now(UTC).date().isoformat()
    table = run(sqlite_cli, "analytics", "performance", "--period", "week")
    assert table.exit_code == 0 and "refunds" in table.stdout and "playbook" in table.stdout
    assert "entry performance (week)" in table.stdout
    for_group = run(sqlite_cli, "analytics", "performance", "--audience", "enterprise")
    assert for_group.exit_code == 0, for_group.output
    assert "entry performance (all, members of enterprise)" in for_group.stdout


def test_events_filters(sqlite_cli: CliRunner) -> None:
    cited = json.loads(run(sqlite_cli, "analytics", "events", "--cited", "--json").stdout)
    assert [e["card_id"] for e in cited] == ["refunds"] and cited[0]["rrf_score"] == 0.016393
    by_card = json.loads(
        run(sqlite_cli, "analytics", "events", "--card", "playbook", "--json").stdout
    )
    assert [e["final_rank"] for e in by_card] == [2]
    none = json.loads(run(sqlite_cli, "analytics", "events", "--path", "full", "--json").stdout)
    assert none == []
    future = json.loads(
        run(sqlite_cli, "analytics", "events", "--since", "2999-01-01", "--json").stdout
    )
    assert future == []
    table = run(sqlite_cli, "analytics", "events")
    assert table.exit_code == 0 and "rrf_only" in table.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["performance", "--period", "year"],
            "unknown period 'year'; allowed: day, week, month, all",
        ),
        (
            ["events", "--path", "fast"],
            "unknown hybrid_path 'fast'; allowed: full, rrf_only, dense_only, none",
        ),
        (
            ["events", "--since", "yesterday"],
            "--since: 'yesterday' is not a date (YYYY-MM-DD) or ISO 8601 time",
        ),
        (["events", "--limit", "0"], "limit must be between 1 and 1000, got 0"),
    ],
)
def test_bad_options_are_usage_errors(sqlite_cli: CliRunner, args: list[str], message: str) -> None:
    result = run(sqlite_cli, "analytics", *args)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {message}"
    assert "Traceback" not in result.output


def test_unreachable_postgresql(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CITEWALL_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:1/x")
    result = run(CliRunner(), "analytics", "performance")
    get_settings.cache_clear()
    assert result.exit_code == 1
    assert result.stderr.startswith("error: cannot reach the PostgreSQL database x at 127.0.0.1:1")
    assert len(result.stderr.strip().splitlines()) == 1


def test_analytics_on_postgresql(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(postgres_url)
    migrate(engine)
    with engine.begin() as conn:
        conn.execute(text("TRUNCATE retrieval_events, messages, conversations CASCADE"))
    engine.dispose()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CITEWALL_DATABASE_URL", postgres_url)
    result = run(CliRunner(), "analytics", "performance", "--period", "month", "--json")
    get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == []


def test_parse_when() -> None:
    assert parse_when("2026-03-01", "--since") == datetime(2026, 3, 1, tzinfo=UTC)
    assert parse_when("2026-03-01T10:00:00+02:00", "--since") == datetime(2026, 3, 1, 8, tzinfo=UTC)
    assert parse_when("2026-03-01T10:00:00", "--until") == datetime(2026, 3, 1, 10, tzinfo=UTC)
    assert parse_when(None, "--since") is None
    with pytest.raises(UserError, match="--until"):
        parse_when("03/01/2026", "--until")
