"""`citewall sources` and `citewall sync` on a card file: register, sync, list, change the file,
sync again (the removed card is gone), a usage mistake exits 2, remove deletes the cards."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from citewall.cli.main import app
from citewall.config import get_settings
from citewall.ingest.sync import source_lease_name
from citewall.storage import audit, cards, kb_sources, leases
from citewall.storage.schema import open_database
from citewall.storage.types import utcnow

HELP = "https://help.example.com/sitemap.xml"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("CITEWALL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CITEWALL_RERANKER_ENABLED", "false")
    monkeypatch.delenv("CITEWALL_DATABASE_URL", raising=False)
    monkeypatch.delenv("CITEWALL_CHROMA_URL", raising=False)
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()


def write_cards(path: Path, ids: list[str]) -> None:
    path.write_text(
        "".join(
            json.dumps({"id": i, "title": f"Playbook {i}", "body": f"Steps for case {i}."}) + "\n"
            for i in ids
        )
    )


def card_ids() -> set[str]:
    db = open_database(get_settings().sqlalchemy_url)
    try:
        with db.sessions() as session:
            return set(cards.card_hashes(session))
    finally:
        db.dispose()


def test_register_sync_change_and_remove_a_card_file(env: Path) -> None:
    file = env / "playbooks.jsonl"
    write_cards(file, ["pb-a", "pb-b", "pb-c"])
    run = CliRunner().invoke
    added = run(app, ["sources", "add", "cards", str(file), "--every", "1d"])
    assert added.exit_code == 0 and "source 1: cards" in added.stdout, added.output
    again = run(app, ["sources", "add", "cards", str(file)])
    assert again.exit_code == 2 and "registered already" in again.stderr
    synced = run(app, ["sync", "--no-progress"])
    assert synced.exit_code == 0, synced.output
    assert "applied" in synced.stdout and "added 3" in synced.stdout
    assert card_ids() == {"pb-a", "pb-b", "pb-c"}

    write_cards(file, ["pb-a", "pb-b"])
    resynced = run(app, ["sync", "1", "--no-progress"])
    assert resynced.exit_code == 0 and "removed 1" in resynced.stdout, resynced.output
    assert card_ids() == {"pb-a", "pb-b"}
    listed = run(app, ["sources", "list"])
    assert listed.exit_code == 0 and "removed 1" in listed.stdout, listed.output

    write_cards(file, [])
    held = run(app, ["sync", "1", "--no-progress"])
    assert held.exit_code == 1 and "held" in held.stdout and "--confirm" in held.stdout
    assert card_ids() == {"pb-a", "pb-b"}

    removed = run(app, ["sources", "remove", "1"])
    assert removed.exit_code == 0 and "and 2 cards" in removed.stdout, removed.output
    assert card_ids() == set()
    db = open_database(get_settings().sqlalchemy_url)
    try:
        with db.sessions() as session:
            assert kb_sources.list_sources(session) == []
            # Each sync that changed the KB is an audit line (the held one is not), and so are
            # registering and removing the source.
            changes, total = audit.entries(session, action="cards.change")
            sources, _ = audit.entries(session, action="sources.change")
    finally:
        db.dispose()
    assert total == 2 and {line.target for line in changes} == {"source:1"}
    assert [line.detail for line in reversed(changes)] == [
        {"added": 3, "updated": 0, "deleted": 0},
        {"added": 0, "updated": 0, "deleted": 1},
    ]
    assert [(line.target, line.via) for line in reversed(sources)] == [
        ("source:1", "cli"),
        ("source:1", "cli"),
    ]
    assert sources[0].detail == {"removed": f"cards {file}", "deleted": 2}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sources", "add", "cards", "nowhere.jsonl"], "is not a file"),
        (["sources", "add", "folder", "nowhere/"], "is not a folder"),
        (["sources", "add", "site", "javascript:alert(1)"], "not a URL the crawler can read"),
        (["sources", "add", "site", HELP, "--every", "6x"], "not a duration"),
        (["sources", "add", "site", HELP, "--every", "1m"], "shortest"),
        (["sources", "remove", "7"], "no source 7"),
        (["sync", "7"], "no source 7"),
    ],
)
def test_usage_mistakes_exit_2(env: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and message in result.stderr, result.output


def test_a_source_another_process_is_syncing_is_not_synced_twice(env: Path) -> None:
    file = env / "leased.jsonl"
    write_cards(file, ["pb-a"])
    run = CliRunner().invoke
    assert run(app, ["sources", "add", "cards", str(file)]).exit_code == 0
    db = open_database(get_settings().sqlalchemy_url)
    try:
        with db.sessions() as session:
            name = source_lease_name(1)
            assert leases.acquire(session, name, "replica-b", now=utcnow(), ttl=timedelta(hours=1))
        running = run(app, ["sync", "--no-progress"])
        assert running.exit_code == 1 and "already running" in running.stdout, running.output
        assert card_ids() == set()
        removing = run(app, ["sources", "remove", "1"])
        assert removing.exit_code == 2 and "already running" in removing.stderr
        with db.sessions() as session:
            leases.release(session, name, "replica-b")
    finally:
        db.dispose()
    synced = run(app, ["sync", "--no-progress"])
    assert synced.exit_code == 0 and card_ids() == {"pb-a"}, synced.output
