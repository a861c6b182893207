"""`citewall users erase` (asks first, `--yes` does not; prints the receipt) and `citewall
retention run` (the settings' windows, what it removed), on both databases."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner, Result

from citewall.api.privacy_schemas import ErasureReceipt
from citewall.cli.main import app
from citewall.config import get_settings
from citewall.storage.db import make_engine, make_session_factory
from citewall.storage.models import AuditEntry, Conversation, Erasure, Message, User
from citewall.storage.schema import migrate
from citewall.storage.types import utcnow
from citewall.storage.users import create_user


@pytest.fixture
def cli(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CliRunner]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CITEWALL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CITEWALL_DATABASE_URL", database_url)
    get_settings.cache_clear()
    yield CliRunner()
    get_settings.cache_clear()


def run(runner: CliRunner, *args: str, answer: str | None = None) -> Result:
    get_settings.cache_clear()
    return runner.invoke(app, list(args), input=answer)


def _member_with_a_turn(database_url: str, name: str, days_ago: int = 0) -> tuple[int, str]:
    engine = make_engine(database_url)
    migrate(engine)
    at = utcnow() - timedelta(days=days_ago)
    try:
        with make_session_factory(engine)() as session:
            user, _ = create_user(session, name)
            conversation = Conversation(user_id=user.id, title="my order", updated_at=at)
            session.add(conversation)
            session.flush()
            session.add_all(
                [
                    Message(
                        conversation_id=conversation.id, seq=1, role="user", content="my order"
                    ),
                    Message(conversation_id=conversation.id, seq=2, role="assistant", content="ok"),
                ]
            )
            session.commit()
            return user.id, conversation.id
    finally:
        engine.dispose()


def _read(database_url: str, query: object) -> list[object]:
    engine = make_engine(database_url)
    try:
        with make_session_factory(engine)() as session:
            return list(session.scalars(query))  # type: ignore[call-overload]
    finally:
        engine.dispose()


def test_erase_asks_first_and_prints_the_receipt(cli: CliRunner, database_url: str) -> None:
    name = f"leaver-{abs(hash(database_url)) % 10_000}"
    user_id, conversation = _member_with_a_turn(database_url, name)
    declined = run(cli, "users", "erase", name, answer="n\n")
    assert declined.exit_code != 0
    assert _read(database_url, select(User.id).where(User.id == user_id)) == [user_id]
    result = run(cli, "users", "erase", str(user_id), "--yes")
    assert result.exit_code == 0, result.output
    receipt = json.loads(result.stdout.split("receipt:\n", 1)[1])
    # The admin API's receipt, field for field: the request's id is `id` in both.
    assert set(receipt) == set(ErasureReceipt.model_fields)
    (erasure_id,) = _read(database_url, select(Erasure.id).where(Erasure.user_id == user_id))
    assert receipt["id"] == erasure_id and receipt["status"] == "done"
    assert receipt["completed_at"] > receipt["requested_at"]
    assert receipt["user_id"] == user_id and receipt["requested_by"].startswith("cli")
    assert receipt["removed"]["messages.content"] == 2 and receipt["kept"]["conversations"] == 1
    assert name not in result.stdout
    assert _read(database_url, select(User.id).where(User.id == user_id)) == []
    assert _read(
        database_url, select(Message.content).where(Message.conversation_id == conversation)
    ) == ["", ""]
    lines = _read(database_url, select(AuditEntry.via).where(AuditEntry.action == "erasure"))
    assert "cli" in lines
    missing = run(cli, "users", "erase", "nobody-at-all", "--yes")
    assert missing.exit_code == 2 and "no user named 'nobody-at-all'" in missing.stderr


def test_retention_run_removes_what_the_window_asks(
    cli: CliRunner, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, old = _member_with_a_turn(database_url, f"old-{abs(hash(database_url)) % 10_000}", 40)
    _, recent = _member_with_a_turn(database_url, f"new-{abs(hash(database_url)) % 10_000}", 1)
    off = run(cli, "retention", "run")
    assert off.exit_code == 0 and "is not set" in off.stdout
    monkeypatch.setenv("CITEWALL_RETENTION_DAYS", "30")
    result = run(cli, "retention", "run", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["retention_days"] == 30 and summary["conversations"] >= 1
    assert _read(database_url, select(Message.content).where(Message.conversation_id == old)) == [
        "",
        "",
    ]
    assert _read(
        database_url, select(Message.content).where(Message.conversation_id == recent)
    ) == ["my order", "ok"]
    # Run again with a one-day window: what is left is counted in the operator's words.
    monkeypatch.setenv("CITEWALL_RETENTION_DAYS", "1")
    again = run(cli, "retention", "run")
    assert again.exit_code == 0, again.output
    said = re.search(
        r"removed the words of (\d+) (conversations?) not updated for 1 day$", again.stdout, re.M
    )
    assert said is not None, again.stdout
    assert said[2] == ("conversation" if int(said[1]) == 1 else "conversations")
    assert "(s)" not in again.stdout and "1 days" not in again.stdout
    monkeypatch.setenv("CITEWALL_RETENTION_DAYS", "0")
    bad = run(cli, "retention", "run")
    assert bad.exit_code == 2 and "CITEWALL_RETENTION_DAYS" in bad.stderr
