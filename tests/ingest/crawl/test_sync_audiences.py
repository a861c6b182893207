"""Registered sources carry audiences: `citewall sources add site URL --audience G` (and
`add folder PATH --audience G`) stores the groups with the source, every sync applies them as
`citewall ingest --site URL --audience G` does, `sources list` and `GET /api/v1/admin/sources`
show them, and `citewall sources audiences ID G...` followed by a sync re-labels the cards.

Real parts: a loopback help center, the CLI, SQLite, embedded Chroma, the packaged embedder,
and a member asking through `POST /api/v1/chat`."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from citewall.api.app import create_app
from citewall.cli.main import app
from citewall.config import get_settings
from citewall.runtime import Runtime
from citewall.storage import cards, users
from citewall.storage.schema import open_database
from citewall_evals.helpsite import XML, HelpSite, Route, page, sitemap

CUSTOMS = (
    "Customs forms for parcels abroad",
    "<p>Parcels leaving the country need a customs declaration with the contents and their "
    "value. Print it with the label and attach it to the outside of the parcel.</p>",
)
QUESTION = "What customs form does a parcel going abroad need?"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("CITEWALL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CITEWALL_RERANKER_ENABLED", "false")
    monkeypatch.setenv("CITEWALL_CRAWL_ALLOW_PRIVATE", "1")
    monkeypatch.setenv("CITEWALL_CRAWL_DELAY_S", "0")
    monkeypatch.setenv("CITEWALL_RATE_LIMIT_PER_MINUTE", "0")
    monkeypatch.delenv("CITEWALL_DATABASE_URL", raising=False)
    monkeypatch.delenv("CITEWALL_CHROMA_URL", raising=False)
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()


@pytest.fixture
def site() -> Iterator[HelpSite]:
    with HelpSite() as help_site:
        help_site.routes.update(
            {
                "/sitemap.xml": Route(sitemap([help_site.url("/customs")]), XML),
                "/customs": Route(page(*CUSTOMS)),
            }
        )
        yield help_site


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def catalogue() -> dict[str, tuple[tuple[str, ...], str]]:
    """card id -> (its audiences, its content hash), as stored."""
    db = open_database(get_settings().sqlalchemy_url)
    try:
        with db.sessions() as session:
            return {
                row.id: (tuple(row.audiences or ()), row.content_hash)
                for row in cards.cards_with_id_prefix(session, "")
            }
    finally:
        db.dispose()


def ask(embedder: Any, groups: list[str]) -> tuple[set[str], list[dict[str, Any]]]:
    """A member in ``groups`` asks QUESTION over HTTP: the source URLs served to them; and the
    registered sources as an admin reads them."""
    runtime = Runtime.from_settings(get_settings(), embedder=embedder)
    try:
        with runtime.session_factory() as session:
            suffix = uuid.uuid4().hex[:8]
            _, member = users.create_user(session, f"m-{suffix}", "member", groups=groups)
            _, admin = users.create_user(session, f"a-{suffix}", "admin")
        client = TestClient(create_app(runtime))
        auth = {"Authorization": f"Bearer {member}"}
        reply = client.post("/api/v1/chat", json={"message": QUESTION}, headers=auth)
        assert reply.status_code == 200, reply.text
        listed = client.get("/api/v1/admin/sources", headers={"Authorization": f"Bearer {admin}"})
        assert listed.status_code == 200, listed.text
        return {s["url"] for s in reply.json()["sources"]}, listed.json()
    finally:
        runtime.close()


def test_a_site_source_carries_its_audiences_to_every_sync(
    env: Path, site: HelpSite, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, customs = site.url("/sitemap.xml"), site.url("/customs")
    added = cli("sources", "add", "site", url, "--audience", "enterprise", "--audience", "beta")
    assert added.exit_code == 0, added.output
    assert "beta, enterprise" in added.stdout
    synced = cli("sync", "--no-progress")
    assert synced.exit_code == 0 and "added 1" in synced.stdout, synced.output
    stored = catalogue()
    assert [a for a, _ in stored.values()] == [("beta", "enterprise")]

    # Exactly what `citewall ingest --site URL --audience G` stores, in a data dir of its own.
    monkeypatch.setenv("CITEWALL_DATA_DIR", str(env / "ingested"))
    get_settings.cache_clear()
    ingested = cli(
        "ingest", "--site", url, "--audience", "beta", "--audience", "enterprise", "--no-progress"
    )
    assert ingested.exit_code == 0, ingested.output
    assert catalogue() == stored
    monkeypatch.setenv("CITEWALL_DATA_DIR", str(env / "data"))
    get_settings.cache_clear()

    served, listed = ask(embedder, [])
    assert customs not in served
    assert [s["audiences"] for s in listed] == [["beta", "enterprise"]]
    served, _ = ask(embedder, ["enterprise"])
    assert customs in served
    shown = cli("sources", "list")
    assert shown.exit_code == 0 and "beta, enterprise" in shown.stdout, shown.output

    # Open the source to every member: the next sync re-labels its card.
    opened = cli("sources", "audiences", "1")
    assert opened.exit_code == 0 and "every member" in opened.stdout, opened.output
    resynced = cli("sync", "1", "--no-progress")
    assert resynced.exit_code == 0 and "updated 1" in resynced.stdout, resynced.output
    assert [a for a, _ in catalogue().values()] == [()]
    served, listed = ask(embedder, [])
    assert customs in served
    assert [s["audiences"] for s in listed] == [[]]


def test_a_folder_source_labels_the_cards_that_name_no_audience(env: Path) -> None:
    folder = env / "playbooks"
    folder.mkdir()
    rows = [
        {"id": "pb-open", "title": "Refund a parcel", "body": "Refund within 14 days."},
        {"id": "pb-own", "title": "Partner fees", "body": "Fees.", "audiences": ["partners"]},
    ]
    (folder / "cards.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    added = cli("sources", "add", "folder", str(folder), "--audience", "enterprise")
    assert added.exit_code == 0, added.output
    assert cli("sync", "--no-progress").exit_code == 0
    assert {i: a for i, (a, _) in catalogue().items()} == {
        "pb-open": ("enterprise",),
        "pb-own": ("partners",),
    }
    changed = cli("sources", "audiences", "1", "beta")
    assert changed.exit_code == 0 and "beta" in changed.stdout, changed.output
    resynced = cli("sync", "1", "--no-progress")
    assert resynced.exit_code == 0 and "updated 1" in resynced.stdout, resynced.output
    assert {i: a for i, (a, _) in catalogue().items()} == {
        "pb-open": ("beta",),
        "pb-own": ("partners",),
    }


def test_a_bad_audience_is_refused_naming_it(env: Path, site: HelpSite) -> None:
    bad = cli("sources", "add", "site", site.url("/sitemap.xml"), "--audience", "Enterprise Plan")
    assert bad.exit_code == 2, bad.output
    assert "--audience" in bad.stderr and "'Enterprise Plan'" in bad.stderr
    assert cli("sources", "audiences", "7", "beta").exit_code == 2  # no source 7
    listed = cli("sources", "list")
    assert "no sources" in listed.stdout
