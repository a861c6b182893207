"""The admin routes of the registered sources: the list and a source's runs, and what
`citewall sources add|remove` and `citewall sync` do, over HTTP: register (422 naming the
refused field), sync now (a held run, then confirmed), 409 while another process holds the
source's lease, remove with its cards. Admins only; each write is an audit line. A loopback help
center and a card file are the sources; a member asks through the chat after each change."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from citewall.api.app import create_app
from citewall.ingest.sync import source_lease_name
from citewall.storage import audit, kb_sources, leases
from citewall.storage.kb_sources import Refused, SourceState, SyncRun
from citewall.storage.models import Lease
from citewall.storage.types import utcnow
from citewall_evals.helpsite import XML, HelpSite, Route, page, sitemap

from .conftest import ApiEnv, env_on

SOURCES = "/api/v1/admin/sources"
CUSTOMS = (
    "Customs forms for parcels abroad",
    "<p>Parcels leaving the country need a customs declaration with the contents and their "
    "value. Print the CN23 form with the label and attach it to the outside of the parcel.</p>",
)
CUSTOMS_QUESTION = "What customs form does a parcel going abroad need?"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def env(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, embedder: Any
) -> Iterator[ApiEnv]:
    """The API over SQLite, then PostgreSQL (the lease is a row lock there), allowed to crawl
    a loopback help center."""
    with env_on(
        request.param,
        tmp_path_factory.mktemp(f"api-sources-{request.param}"),
        embedder,
        crawl_allow_private=True,
        crawl_delay_s=0.0,
        crawl_timeout_s=2.0,
        calibration=False,
    ) as built:
        yield built


def card_file(path: Path, ids: list[str]) -> Path:
    lines = [
        json.dumps({"id": i, "title": f"Pallet note {i}", "body": f"Pallet note {i} for staff."})
        for i in ids
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def audit_lines(env: ApiEnv, action: audit.AuditAction, target: str) -> list[Any]:
    with env.runtime.session_factory() as session:
        rows, _ = audit.entries(session, action=action, limit=200)
    return [r for r in rows if r.target == target]


def source_urls(env: ApiEnv, question: str) -> set[str]:
    reply = env.chat("member", question)
    assert reply.status_code == 200, reply.text
    return {s["url"] for s in reply.json()["sources"] if s.get("url")}


def test_admins_see_each_source_with_its_last_sync(env: ApiEnv) -> None:
    now = utcnow()
    with env.runtime.session_factory() as session:
        site = kb_sources.add_source(
            session, "site", "https://help.example.com/sitemap.xml", every_s=3600, now=now
        )
        other = kb_sources.add_source(session, "cards", "/kb/playbooks.jsonl", now=now)
        kb_sources.record_sync(
            session,
            site.id,
            SyncRun("applied", now, added=3, refusals=(Refused("https://x/y", "HTTP 500"),)),
            SourceState(["a", "b", "c"]),
        )
        kb_sources.record_sync(session, site.id, SyncRun("held", now, note="fewer than half"), None)

    listed = env.client.get(SOURCES, headers=env.auth("admin"))
    assert listed.status_code == 200, listed.text
    by_id = {s["id"]: s for s in listed.json()}
    first, second = by_id[site.id], by_id[other.id]
    assert (first["kind"], first["cards"], first["every_s"]) == ("site", 3, 3600)
    assert first["last_run"]["status"] == "held" and first["last_run"]["note"] == "fewer than half"
    assert second["last_run"] is None and second["next_sync_at"] is None

    runs = env.client.get(f"{SOURCES}/{site.id}/runs", headers=env.auth("admin"))
    assert [r["status"] for r in runs.json()] == ["held", "applied"]
    assert runs.json()[1]["refusals"] == [{"where": "https://x/y", "reason": "HTTP 500"}]

    assert env.client.get(SOURCES, headers=env.auth("member")).status_code == 403
    missing = env.client.get(f"{SOURCES}/999/runs", headers=env.auth("admin"))
    assert missing.status_code == 404 and "no source 999" in missing.json()["detail"]


def test_an_admin_adds_a_site_syncs_it_and_removes_it(env: ApiEnv) -> None:
    with HelpSite({"/customs": Route(page(*CUSTOMS))}) as site:
        site.routes["/sitemap.xml"] = Route(sitemap([site.url("/customs")]), XML)
        url, customs = site.url("/sitemap.xml"), site.url("/customs")
        body = {"kind": "site", "url": url, "license": "CC-BY-4.0", "every": "6h"}
        added = env.client.post(SOURCES, json=body, headers=env.auth("admin"))
        assert added.status_code == 201, added.text
        source = added.json()
        assert (source["kind"], source["location"], source["every_s"]) == ("site", url, 21600)
        assert source["license"] == "CC-BY-4.0" and source["last_run"] is None
        assert source["next_sync_at"] is not None  # due at once
        target = f"source:{source['id']}"
        (line,) = audit_lines(env, "sources.change", target)
        assert line.actor_user_id == env.user_ids["admin"] and line.via == "bearer"
        assert line.detail["added"] == f"site {url}"
        again = env.client.post(SOURCES, json=body, headers=env.auth("admin"))
        assert again.status_code == 409 and "registered already" in again.json()["detail"]

        assert customs not in source_urls(env, CUSTOMS_QUESTION)
        synced = env.client.post(f"{SOURCES}/{source['id']}/sync", headers=env.auth("admin"))
        assert synced.status_code == 200, synced.text
        run = synced.json()
        assert (run["status"], run["added"], run["removed"]) == ("applied", 1, 0), run
        assert customs in source_urls(env, CUSTOMS_QUESTION)
        (changed,) = audit_lines(env, "cards.change", target)
        assert changed.actor_user_id == env.user_ids["admin"] and changed.detail["added"] == 1

    listed = {s["id"]: s for s in env.client.get(SOURCES, headers=env.auth("admin")).json()}
    assert listed[source["id"]]["cards"] == 1
    assert listed[source["id"]]["last_run"]["id"] == run["id"]
    runs = env.client.get(f"{SOURCES}/{source['id']}/runs", headers=env.auth("admin")).json()
    assert [r["id"] for r in runs] == [run["id"]]

    removed = env.client.delete(f"{SOURCES}/{source['id']}", headers=env.auth("admin"))
    assert removed.status_code == 200, removed.text
    assert removed.json()["deleted"] == 1 and removed.json()["source"]["id"] == source["id"]
    assert customs not in source_urls(env, CUSTOMS_QUESTION)
    assert source["id"] not in {
        s["id"] for s in env.client.get(SOURCES, headers=env.auth("admin")).json()
    }
    lines = audit_lines(env, "sources.change", target)
    assert [ln.detail.get("deleted") for ln in lines] == [1, None]  # newest first
    gone = env.client.delete(f"{SOURCES}/{source['id']}", headers=env.auth("admin"))
    assert gone.status_code == 404


def test_a_shrunk_card_file_is_held_until_confirmed(env: ApiEnv, tmp_path: Path) -> None:
    ids = [f"pallet-{env.backend}-{n}" for n in "abcd"]
    file = card_file(tmp_path / "pallets.jsonl", ids)
    added = env.client.post(
        SOURCES,
        json={"kind": "cards", "server_path": str(file), "audiences": ["staff-only"]},
        headers=env.auth("admin"),
    )
    assert added.status_code == 201, added.text
    source_id = added.json()["id"]
    assert added.json()["audiences"] == ["staff-only"] and added.json()["next_sync_at"] is None
    sync = f"{SOURCES}/{source_id}/sync"
    first = env.client.post(sync, headers=env.auth("admin")).json()
    assert (first["status"], first["added"]) == ("applied", 4), first

    card_file(file, ids[:1])
    held = env.client.post(sync, params={"confirm": "false"}, headers=env.auth("admin")).json()
    assert (held["status"], held["removed"]) == ("held", 0), held
    assert "fewer than half" in held["note"]
    with env.runtime.session_factory() as session:
        assert len(kb_sources.get_source(session, source_id).card_ids) == 4

    applied = env.client.post(sync, params={"confirm": "true"}, headers=env.auth("admin")).json()
    assert (applied["status"], applied["removed"]) == ("applied", 3), applied
    statuses = [
        r["status"]
        for r in env.client.get(f"{SOURCES}/{source_id}/runs", headers=env.auth("admin")).json()
    ]
    assert statuses == ["applied", "held", "applied"]
    removed = env.client.delete(f"{SOURCES}/{source_id}", headers=env.auth("admin")).json()
    assert removed["deleted"] == 1


def test_a_source_another_process_is_syncing_answers_409(env: ApiEnv, tmp_path: Path) -> None:
    file = card_file(tmp_path / "leased.jsonl", ["leased-a"])
    source_id = env.client.post(
        SOURCES, json={"kind": "cards", "server_path": str(file)}, headers=env.auth("admin")
    ).json()["id"]
    name = source_lease_name(source_id)
    with env.runtime.session_factory() as session:
        assert leases.acquire(session, name, "replica-b", now=utcnow(), ttl=timedelta(hours=1))
    sync = f"{SOURCES}/{source_id}/sync"
    running = env.client.post(sync, headers=env.auth("admin"))
    assert running.status_code == 409, running.text
    assert running.json()["detail"] == f"a sync of source {source_id} is already running"
    assert env.client.delete(f"{SOURCES}/{source_id}", headers=env.auth("admin")).status_code == 409
    with env.runtime.session_factory() as session:
        assert kb_sources.source_runs(session, source_id) == []  # nothing ran
        # The other process died an hour ago: its lease has run out.
        past = utcnow() - timedelta(hours=2)
        assert leases.acquire(session, name, "replica-b", now=past, ttl=timedelta(hours=1))
    after = env.client.post(sync, headers=env.auth("admin"))
    assert after.status_code == 200 and after.json()["status"] == "applied", after.text
    removed = env.client.delete(f"{SOURCES}/{source_id}", headers=env.auth("admin"))
    assert removed.status_code == 200 and removed.json()["deleted"] == 1


def test_a_sync_asked_while_one_runs_is_refused_not_started_twice(env: ApiEnv) -> None:
    """Two admins press "Sync now" at once: the second is told, and one run is recorded."""
    with HelpSite({"/customs": Route(page(*CUSTOMS), delay_s=1.5)}) as site:
        site.routes["/sitemap.xml"] = Route(sitemap([site.url("/customs")]), XML)
        body = {"kind": "site", "url": site.url("/sitemap.xml")}
        source_id = env.client.post(SOURCES, json=body, headers=env.auth("admin")).json()["id"]
        sync = f"{SOURCES}/{source_id}/sync"
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(env.client.post, sync, headers=env.auth("admin"))
            deadline = time.monotonic() + 20
            while not lease_held(env, source_id) and not first.done():
                assert time.monotonic() < deadline, "the first sync never took its lease"
                time.sleep(0.05)
            second = env.client.post(sync, headers=env.auth("admin"))
            assert first.result().status_code == 200, first.result().text
        assert second.status_code == 409 and "already running" in second.json()["detail"]
        assert first.result().json()["added"] == 1
    with env.runtime.session_factory() as session:
        assert len(kb_sources.source_runs(session, source_id)) == 1
    assert not lease_held(env, source_id)  # released once the sync ended
    assert env.client.delete(f"{SOURCES}/{source_id}", headers=env.auth("admin")).status_code == 200


def lease_held(env: ApiEnv, source_id: int) -> bool:
    with env.runtime.session_factory() as session:
        return session.get(Lease, source_lease_name(source_id)) is not None


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ({"kind": "site", "url": "javascript:alert(1)"}, "url", "not a URL the crawler can read"),
        ({"kind": "site"}, "url", "a site source needs its url"),
        (
            {"kind": "site", "url": "https://h.example/", "server_path": "/x"},
            "server_path",
            "not a server_path",
        ),
        ({"kind": "folder", "server_path": "/nowhere/at/all"}, "server_path", "is not a folder"),
        ({"kind": "cards", "server_path": "/etc"}, "server_path", "is not a file"),
        ({"kind": "cards", "server_path": "a\x00b"}, "server_path", "is not a file"),
        ({"kind": "cards", "server_path": "x" * 1999}, "server_path", "is not a file"),
        ({"kind": "folder", "url": "https://h.example/"}, "server_path", "needs its server_path"),
        ({"kind": "site", "url": "https://h.example/", "every": "6x"}, "every", "not a duration"),
        ({"kind": "site", "url": "https://h.example/", "every": "1m"}, "every", "shortest"),
        (
            {"kind": "site", "url": "https://h.example/", "audiences": ["Not A Group"]},
            "audiences",
            "is not a group name",
        ),
        ({"kind": "playbooks", "server_path": "/tmp"}, "kind", ""),
        ({"kind": "site", "url": "https://h.example/", "extra": 1}, "extra", ""),
        ({"kind": "site", "url": "https://h.example/", "every": 6}, "every", ""),
    ],
)
def test_a_refused_source_is_a_422_naming_its_field(
    env: ApiEnv, body: dict[str, Any], field: str, says: str
) -> None:
    refused = env.client.post(SOURCES, json=body, headers=env.auth("admin"))
    assert refused.status_code == 422, refused.text
    problem = refused.json()["detail"][0]
    assert problem["loc"][-1] == field and says in problem["msg"], problem
    assert not [
        s
        for s in env.client.get(SOURCES, headers=env.auth("admin")).json()
        if "h.example" in s["location"]
    ]


def test_members_and_strangers_cannot_change_sources(env: ApiEnv, tmp_path: Path) -> None:
    file = card_file(tmp_path / "member.jsonl", ["member-a"])
    body = {"kind": "cards", "server_path": str(file)}
    for headers, code in ((env.auth("member"), 403), ({}, 401)):
        assert env.client.post(SOURCES, json=body, headers=headers).status_code == code
        assert env.client.post(f"{SOURCES}/1/sync", headers=headers).status_code == code
        assert env.client.delete(f"{SOURCES}/1", headers=headers).status_code == code
    for method in ("post", "delete"):
        path = f"{SOURCES}/99999999999999999999" + ("/sync" if method == "post" else "")
        huge = getattr(env.client, method)(path, headers=env.auth("admin"))
        assert huge.status_code in (404, 422), huge.text
    not_json = env.client.post(
        SOURCES,
        content=b"{not json",
        headers={**env.auth("admin"), "Content-Type": "application/json"},
    )
    assert not_json.status_code == 400, not_json.text


def test_a_site_the_crawler_may_not_reach_is_refused_at_registration(env: ApiEnv) -> None:
    """Refused when it is typed, naming the setting, not at its first sync (where it read as
    "robots.txt could not be read")."""
    closed = replace(
        env.runtime, settings=env.runtime.settings.model_copy(update={"crawl_allow_private": False})
    )
    client = TestClient(create_app(closed))
    for url, says in (
        ("http://127.0.0.1:8766/sitemap.xml", "loopback address 127.0.0.1"),
        ("http://localhost:8766/sitemap.xml", "CITEWALL_CRAWL_ALLOW_PRIVATE=1"),
        ("http://10.0.0.7/sitemap.xml", "private address 10.0.0.7"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ):
        refused = client.post(SOURCES, json={"kind": "site", "url": url}, headers=env.auth("admin"))
        assert refused.status_code == 422, refused.text
        problem = refused.json()["detail"][0]
        assert problem["loc"][-1] == "url" and says in problem["msg"], problem
    # Allowed by the setting, as in the rest of this module.
    allowed = env.client.post(
        SOURCES,
        json={"kind": "site", "url": "http://127.0.0.1:9/allowed-sitemap.xml"},
        headers=env.auth("admin"),
    )
    assert allowed.status_code == 201, allowed.text
    assert (
        env.client.delete(
            f"{SOURCES}/{allowed.json()['id']}", headers=env.auth("admin")
        ).status_code
        == 200
    )
