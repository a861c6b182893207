"""`citewall users`: tokens on the last line, clear errors and exit codes, both databases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from citewall.cli.main import app
from citewall.config import get_settings
from citewall.storage.db import make_engine, make_session_factory
from citewall.storage.schema import migrate
from citewall.storage.sessions import issue_session
from citewall.storage.types import utcnow
from citewall.storage.users import authenticate, provision_external_user

REPO = Path(__file__).resolve().parents[2]
UNREACHABLE = "postgresql+psycopg://postgres@127.0.0.1:1/citewall"


@pytest.fixture
def cli(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CliRunner]:
    """A runner whose settings point at ``database_url`` (no stray ``.env`` picked up)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CITEWALL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CITEWALL_DATABASE_URL", database_url)
    get_settings.cache_clear()
    yield CliRunner()
    get_settings.cache_clear()


def run(runner: CliRunner, *args: str) -> Result:
    get_settings.cache_clear()  # settings are cached per process; tests change the env
    return runner.invoke(app, list(args))


def name() -> str:
    return f"u-{uuid.uuid4().hex[:8]}"


def user_for(database_url: str, token: str) -> str | None:
    engine = make_engine(database_url)
    try:
        with make_session_factory(engine)() as session:
            user = authenticate(session, token)
            return None if user is None else f"{user.name}:{user.role}"
    finally:
        engine.dispose()


def last_line(result: Result) -> str:
    return result.stdout.rstrip("\n").splitlines()[-1]


def test_add_prints_the_token_alone_on_the_last_line(cli: CliRunner, database_url: str) -> None:
    who = name()
    result = run(cli, "users", "add", who, "--role", "admin")
    assert result.exit_code == 0, result.output
    token = last_line(result)
    assert token.startswith("cw_") and len(token) == 43 and " " not in token
    assert user_for(database_url, token) == f"{who}:admin"
    # default role is member
    member = run(cli, "users", "add", name())
    assert member.exit_code == 0 and user_for(database_url, last_line(member)).endswith(":member")  # type: ignore[union-attr]


def test_unknown_role_is_a_usage_error(cli: CliRunner) -> None:
    result = run(cli, "users", "add", name(), "--role", "boss")
    assert result.exit_code == 2
    assert result.stderr.strip() == ("error: unknown role 'boss'; allowed roles: member, admin")
    assert "Traceback" not in result.output


def test_duplicate_name_is_a_usage_error(cli: CliRunner) -> None:
    who = name()
    assert run(cli, "users", "add", who).exit_code == 0
    again = run(cli, "users", "add", who)
    assert again.exit_code == 2 and f"'{who}' already exists" in again.stderr


def test_list_token_revoke_cycle(cli: CliRunner, database_url: str) -> None:
    who = name()
    first = last_line(run(cli, "users", "add", who))
    issued = run(cli, "users", "token", who)
    assert issued.exit_code == 0
    second = last_line(issued)
    assert second != first and user_for(database_url, second) == f"{who}:member"

    listed = run(cli, "users", "list", "--json")
    assert listed.exit_code == 0
    mine = [u for u in json.loads(listed.stdout) if u["name"] == who]
    assert len(mine) == 1 and sorted(mine[0]["active_tokens"]) == sorted([first[:8], second[:8]])
    assert first not in listed.stdout and second not in listed.stdout
    table = run(cli, "users", "list")
    assert table.exit_code == 0 and who in table.stdout

    dropped = run(cli, "users", "revoke-token", first[:8])
    assert dropped.exit_code == 0
    assert user_for(database_url, first) is None
    assert user_for(database_url, second) == f"{who}:member"

    revoked = run(cli, "users", "revoke", who)
    assert revoked.exit_code == 0
    assert user_for(database_url, second) is None
    again = run(cli, "users", "token", who)
    assert again.exit_code == 2 and "disabled" in again.stderr
    missing = run(cli, "users", "revoke", "nobody-" + who)
    assert missing.exit_code == 2 and "no user named" in missing.stderr


def test_list_counts_live_sessions_and_revoke_ends_them(cli: CliRunner, database_url: str) -> None:
    """A signed-in member's live sessions are counted apart from API tokens; an ended one is
    not active; ``users revoke`` ends the live one."""
    subject = uuid.uuid4().hex
    engine = make_engine(database_url)
    try:
        migrate(engine)
        with make_session_factory(engine)() as session:
            user = provision_external_user(
                session,
                issuer="https://host.test",
                subject=subject,
                readable="pat@host.test",
                email="pat@host.test",
                role="member",
            )
            live = issue_session(session, user, utcnow() + timedelta(hours=1))
            issue_session(session, user, utcnow() - timedelta(seconds=1))
            who = user.name
    finally:
        engine.dispose()
    listed = run(cli, "users", "list", "--json")
    assert listed.exit_code == 0, listed.output
    (mine,) = [u for u in json.loads(listed.stdout) if u["name"] == who]
    assert mine["active_tokens"] == [] and mine["active_sessions"] == 1
    assert mine["issuer"] == "https://host.test" and mine["email"] == "pat@host.test"
    table = run(cli, "users", "list")
    assert table.exit_code == 0 and who in table.stdout

    assert user_for(database_url, live) == f"{who}:member"
    assert run(cli, "users", "revoke", who).exit_code == 0
    assert user_for(database_url, live) is None


@pytest.mark.parametrize(
    "bad_url",
    ["not-a-url", "postgresql+psycopg://postgres@127.0.0.1:port/x", "mysql://u@h/db"],
)
def test_malformed_database_url_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad_url: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CITEWALL_DATABASE_URL", bad_url)
    result = run(CliRunner(), "users", "list")
    get_settings.cache_clear()
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "CITEWALL_DATABASE_URL" in lines[0]
    assert "Traceback" not in result.output


def test_unreachable_database_in_a_real_process(tmp_path: Path) -> None:
    """No traceback, one line naming host and port, non-zero exit: as a user sees it."""
    env = {**os.environ, "CITEWALL_DATABASE_URL": UNREACHABLE, "CITEWALL_DATA_DIR": str(tmp_path)}
    for args in (["users", "add", "alice"], ["users", "list"]):
        proc = subprocess.run(
            [sys.executable, "-m", "citewall.cli.main", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 1, proc.stderr
        assert proc.stdout == ""
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert lines[0].startswith("error: cannot reach the PostgreSQL database citewall")
        assert "127.0.0.1:1" in lines[0]
