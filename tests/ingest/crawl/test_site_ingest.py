"""The whole path: crawl the local help center into a real citewall (SQLite, embedded Chroma,
the packaged embedder), ask as a member through the API, and re-ingest: conditional GETs keep
unchanged pages without embedding them, a changed page is updated, and --prune deletes only
the crawled site's vanished pages."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient

from citewall.api.app import create_app
from citewall.boundary.schemas import METADATA_ALLOWLIST
from citewall.config import Settings, load_settings
from citewall.ingest.crawl.canonical import site_of
from citewall.ingest.crawl.ids import site_prefix
from citewall.ingest.crawl.previous import CRAWL_METADATA_KEYS
from citewall.ingest.crawl.run import SiteIngestReport, ingest_sites
from citewall.ingest.pipeline import ingest_paths
from citewall.runtime import Runtime
from citewall.storage import cards, db, schema, users
from citewall_evals.helpsite import XML, HelpSite, Route, page, sitemap
from ingest.crawl.helpcenter import ARTICLES, REPRINT, help_center

LICENSE = "CC-BY-4.0"
PLAYBOOK = (
    "When a voided label refund is later than 15 business days, open a carrier claim with the "
    "label number and tell the merchant the claim id."
)


@dataclass
class World:
    site: HelpSite
    settings: Settings
    embedder: Any
    session_factory: Any
    internal_ids: list[str]

    def ingest(self, *entries: str, prune: bool = False) -> SiteIngestReport:
        return ingest_sites(
            list(entries) or [self.site.url("/sitemap.xml")],
            self.settings,
            license=LICENSE,
            prune=prune,
            progress=False,
            embedder=self.embedder,
            session_factory=self.session_factory,
        )

    def card_ids(self) -> set[str]:
        with self.session_factory() as session:
            return set(cards.card_hashes(session))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[World]:
    data_dir = tmp_path_factory.mktemp("site-ingest")
    settings = load_settings(
        data_dir=data_dir,
        database_url=None,
        chroma_url=None,
        reranker_enabled=False,
        rate_limit_per_minute=0,
        crawl_allow_private=True,
        crawl_timeout_s=0.5,
        crawl_delay_s=0.0,
        crawl_max_bytes=20_000,
    )
    schema.migrate(settings.sqlalchemy_url)
    engine = db.make_engine(settings.sqlalchemy_url)
    session_factory = db.make_session_factory(engine)
    with help_center() as site:
        # An internal playbook from a JSONL file, and a hand-written card whose id happens to
        # sit under the site's prefix: neither is the crawler's, so no --site prune touches them.
        internal = [
            "playbook-label-refund-escalation",
            site_prefix(site_of(site.url("/"))) + "hand-written",
        ]
        kb = data_dir.parent / "internal.jsonl"
        kb.write_text(
            "\n".join(
                json.dumps(
                    {
                        "id": card_id,
                        "title": "Escalating a late label refund",
                        "body": PLAYBOOK,
                    }
                )
                for card_id in internal
            )
            + "\n"
        )
        report = ingest_paths(
            [kb], settings, embedder=embedder, session_factory=session_factory, progress=False
        )
        assert report.refused == 0, report.summary()
        yield World(site, settings, embedder, session_factory, internal)
    engine.dispose()


@pytest.fixture(scope="module")
def first(world: World) -> SiteIngestReport:
    """The first crawl of the site into the KB (every test below starts after it)."""
    return world.ingest()


def test_first_crawl_adds_the_articles_and_lists_every_refusal(first: SiteIngestReport) -> None:
    r = first
    assert (r.ingest.added, r.ingest.updated, r.ingest.deleted) == (4, 0, 0), r.summary()
    assert len(r.refused) == 8 and len(r.duplicates) == 1 and r.ingest.chunks_embedded >= 4
    assert (
        "added 4, updated 0, unchanged 0 (0 not modified), deleted 0, duplicates 1, refused 8"
        in r.summary()
    )


def test_a_member_sees_the_verified_page_url_and_nothing_of_the_crawl(
    world: World, first: SiteIngestReport
) -> None:
    runtime = Runtime.from_settings(world.settings, embedder=world.embedder)
    try:
        with runtime.session_factory() as session:
            _, token = users.create_user(session, f"member-{uuid.uuid4().hex[:6]}", "member")
        client = TestClient(create_app(runtime))
        reply = client.post(
            "/api/v1/chat",
            json={"message": "How do I void a shipping label I did not use?"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert reply.status_code == 200, reply.text
        sources = reply.json()["sources"]
        void = [s for s in sources if s["url"] == world.site.url("/guides/void-a-label")]
        assert void, sources
        assert void[0]["title"] == "Void a shipping label" and void[0]["license"] == LICENSE
        for source in sources:
            assert set(source["metadata"]) <= METADATA_ALLOWLIST
            assert "crawl" not in json.dumps(source) and "etag" not in json.dumps(source).lower()
        assert not CRAWL_METADATA_KEYS & METADATA_ALLOWLIST
    finally:
        runtime.close()


def test_reingest_then_change_then_prune_the_site_only(
    world: World, first: SiteIngestReport
) -> None:
    site = world.site
    # 1. Nothing changed: every stored page answers 304 to a conditional GET; nothing embedded.
    again = world.ingest()
    assert again.not_modified == 4 and again.ingest.unchanged == 4, again.summary()
    assert (again.ingest.added, again.ingest.updated, again.ingest.chunks_embedded) == (0, 0, 0)
    assert again.ingest.sentences_embedded == 0
    article_hits = [r for p in ARTICLES for r in site.hits(p)]
    assert [r.status for r in article_hits if r.conditional] == [304] * len(ARTICLES)

    # 2. One page changes: it alone is re-embedded.
    site.routes["/guides/reprint"] = Route(
        page("Reprint a label", REPRINT + "<p>Thermal printers need the 4x6 format.</p>")
    )
    changed = world.ingest()
    assert (changed.ingest.updated, changed.not_modified) == (1, 3), changed.summary()
    assert 0 < changed.ingest.chunks_embedded <= 2

    # 3. --prune on a single page entry: refused, the site's other cards stay.
    page_only = world.ingest(site.url("/guides/reprint"), prune=True)
    assert page_only.ingest.deleted == 0
    assert any("--prune skipped" in n and "is a page" in n for n in page_only.notes)

    # 4. A page leaves the sitemap: --prune deletes its card, and only it.
    before = world.card_ids()
    u = site.url
    site.routes["/sitemaps/guides.xml"] = Route(
        sitemap([u("/guides/void-a-label"), u("/guides/reprint")]), XML
    )
    pruned = world.ingest(prune=True)
    gone = before - world.card_ids()
    assert pruned.ingest.deleted == 1 and len(gone) == 1, pruned.summary()
    assert next(iter(gone)).startswith(site_prefix(site_of(u("/"))) + "guides-refunds-")
    assert set(world.internal_ids) <= world.card_ids()  # internal and foreign cards kept


def test_a_site_whose_sitemap_fails_is_not_pruned(world: World, first: SiteIngestReport) -> None:
    site = world.site
    saved = site.routes["/sitemaps/guides.xml"]
    site.routes["/sitemaps/guides.xml"] = Route(b"oops", "text/plain", status=503)
    try:
        before = world.card_ids()
        report = world.ingest(prune=True)
        assert report.ingest.deleted == 0 and world.card_ids() == before
        assert any("not read to the end" in n for n in report.notes), report.notes
    finally:
        site.routes["/sitemaps/guides.xml"] = saved
