"""The sync schedule `citewall serve` keeps: a due source is synced once, and the serving
process answers from the new cards without a restart."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from citewall.api.app import create_app
from citewall.api.sync_schedule import SyncSchedule
from citewall.config import load_settings
from citewall.errors import ConfigError
from citewall.runtime import Runtime
from citewall.storage import kb_sources, schema, users
from citewall.storage.types import utcnow

CARD = {
    "id": "help-customs-forms",
    "title": "Customs forms for parcels abroad",
    "body": "Parcels leaving the country need a customs declaration listing the contents and "
    "their value. Print it with the label and attach it to the outside of the parcel.",
    "url": "https://help.example.com/customs",
    "license": "CC-BY-4.0",
}


def test_a_due_source_is_synced_once_and_served_at_once(tmp_path: Path, embedder: Any) -> None:
    settings = load_settings(
        data_dir=tmp_path / "data",
        database_url=None,
        chroma_url=None,
        reranker_enabled=False,
        rate_limit_per_minute=0,
    )
    schema.migrate(settings.sqlalchemy_url)
    file = tmp_path / "help.jsonl"
    file.write_text(json.dumps(CARD) + "\n")
    runtime = Runtime.from_settings(settings, embedder=embedder)
    try:
        now = utcnow()
        with runtime.session_factory() as session:
            source = kb_sources.add_source(session, "cards", str(file), every_s=3600, now=now)
            _, token = users.create_user(session, f"m-{uuid.uuid4().hex[:8]}", "member")
        clock = now + timedelta(seconds=1)
        schedule = SyncSchedule(runtime.session_factory, settings, embedder, clock=lambda: clock)
        runs = schedule.run_once()
        assert [(r.status, r.added) for r in runs] == [("applied", 1)], runs
        assert schedule.run_once() == []  # synced: due again in an hour, not before
        with runtime.session_factory() as session:
            stored = kb_sources.get_source(session, source.id)
        assert stored.next_sync_at is not None and stored.next_sync_at > clock

        found = TestClient(create_app(runtime)).post(
            "/api/v1/search",
            json={"query": "Which customs declaration does a parcel abroad need?", "limit": 5},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert found.status_code == 200, found.text
        assert CARD["url"] in {r["url"] for r in found.json()["results"]}
    finally:
        runtime.close()


def test_poll_zero_turns_the_schedule_off() -> None:
    assert SyncSchedule.wanted(load_settings(sync_poll_s=60))
    assert not SyncSchedule.wanted(load_settings(sync_poll_s=0))


def test_the_scheduler_setting_turns_the_schedule_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().sync_scheduler  # on by default
    for value, wanted in (("off", False), ("on", True)):
        monkeypatch.setenv("CITEWALL_SYNC_SCHEDULER", value)
        assert SyncSchedule.wanted(load_settings()) is wanted
    monkeypatch.setenv("CITEWALL_SYNC_SCHEDULER", "sometimes")
    with pytest.raises(ConfigError, match="CITEWALL_SYNC_SCHEDULER"):
        load_settings()
