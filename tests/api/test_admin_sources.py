"""GET /api/v1/admin/sources and a source's runs: admins only, each source with its last sync."""

from __future__ import annotations

from citewall.storage import kb_sources
from citewall.storage.kb_sources import Refused, SourceState, SyncRun
from citewall.storage.types import utcnow

from .conftest import ApiEnv


def test_admins_see_each_source_with_its_last_sync(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    now = utcnow()
    with env.runtime.session_factory() as session:
        site = kb_sources.add_source(
            session, "site", "https://help.example.com/sitemap.xml", every_s=3600, now=now
        )
        kb_sources.add_source(session, "cards", "/kb/playbooks.jsonl", now=now)
        kb_sources.record_sync(
            session,
            site.id,
            SyncRun("applied", now, added=3, refusals=(Refused("https://x/y", "HTTP 500"),)),
            SourceState(["a", "b", "c"]),
        )
        kb_sources.record_sync(session, site.id, SyncRun("held", now, note="fewer than half"), None)

    listed = env.client.get("/api/v1/admin/sources", headers=env.auth("admin"))
    assert listed.status_code == 200, listed.text
    first, second = listed.json()
    assert (first["kind"], first["cards"], first["every_s"]) == ("site", 3, 3600)
    assert first["last_run"]["status"] == "held" and first["last_run"]["note"] == "fewer than half"
    assert second["last_run"] is None and second["next_sync_at"] is None

    runs = env.client.get(f"/api/v1/admin/sources/{site.id}/runs", headers=env.auth("admin"))
    assert [r["status"] for r in runs.json()] == ["held", "applied"]
    assert runs.json()[1]["refusals"] == [{"where": "https://x/y", "reason": "HTTP 500"}]

    assert env.client.get("/api/v1/admin/sources", headers=env.auth("member")).status_code == 403
    missing = env.client.get("/api/v1/admin/sources/999/runs", headers=env.auth("admin"))
    assert missing.status_code == 404 and "no source 999" in missing.json()["detail"]
