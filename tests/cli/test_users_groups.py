"""`citewall users add --group` and `citewall users groups`: a token user's groups."""

from __future__ import annotations

import uuid

import test_users
from sqlalchemy import select
from typer.testing import CliRunner

from citewall.storage.db import make_engine, make_session_factory
from citewall.storage.models import User

#: The fixture of test_users.py: a runner on the test's database.
cli = test_users.cli
run = test_users.run


def _groups(database_url: str, name: str) -> list[str] | None:
    engine = make_engine(database_url)
    try:
        with make_session_factory(engine)() as session:
            return session.scalar(select(User.groups).where(User.name == name))
    finally:
        engine.dispose()


def test_groups_are_set_at_add_and_replaced_later(cli: CliRunner, database_url: str) -> None:
    name = f"g-{uuid.uuid4().hex[:8]}"
    added = run(cli, "users", "add", name, "--group", "enterprise", "--group", "beta")
    assert added.exit_code == 0, added.output
    assert "groups beta, enterprise" in added.output
    assert _groups(database_url, name) == ["beta", "enterprise"]
    changed = run(cli, "users", "groups", name, "partners")
    assert changed.exit_code == 0 and "now in partners" in changed.output
    assert _groups(database_url, name) == ["partners"]
    # With no group named, the command shows the groups and changes nothing.
    shown = run(cli, "users", "groups", name)
    assert shown.exit_code == 0 and f"{name!r} is in partners" in shown.output
    assert _groups(database_url, name) == ["partners"]
    both = run(cli, "users", "groups", name, "beta", "--none")
    assert both.exit_code != 0 and "not both" in both.output
    cleared = run(cli, "users", "groups", name, "--none")
    assert cleared.exit_code == 0 and "now in no group" in cleared.output
    assert _groups(database_url, name) == []


def test_a_bad_group_is_a_clear_error(cli: CliRunner, database_url: str) -> None:
    name = f"g-{uuid.uuid4().hex[:8]}"
    bad = run(cli, "users", "add", name, "--group", "Bad Group")
    assert bad.exit_code != 0 and "not a group name" in bad.output
    assert run(cli, "users", "add", name).exit_code == 0  # nobody was created before
    refused = run(cli, "users", "groups", name, "x y")
    assert refused.exit_code != 0 and "not a group name" in refused.output
