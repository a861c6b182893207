"""`citewall sync` of a registered site: a loopback help center whose pages and sitemap change
between syncs (a page added, one changed, one dropped from the sitemap, one answering 410, one
timing out, a sitemap that suddenly lists nothing), into a real citewall (SQLite, embedded
Chroma, the packaged embedder). After each sync a member asks through the HTTP API."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient

from citewall.api.app import create_app
from citewall.config import Settings, load_settings
from citewall.ingest.sync import remove_source, sync_source
from citewall.runtime import Runtime
from citewall.storage import cards, db, kb_sources, schema, users
from citewall.storage.kb_sources import SyncRun
from citewall.storage.types import utcnow
from citewall_evals.helpsite import XML, HelpSite, Route, page, sitemap

LICENSE = "CC-BY-4.0"
ARTICLES = {
    "/void": ("Void a shipping label", "<p>Void an unused shipping label within 30 days.</p>"),
    "/reprint": ("Reprint a label", "<p>A label is reprinted for free until it is scanned.</p>"),
    "/customs": (
        "Customs forms for parcels abroad",
        "<p>Parcels leaving the country need a customs declaration with the contents and their "
        "value. Print it with the label and attach it to the outside of the parcel.</p>",
    ),
    "/insurance": (
        "Parcel insurance",
        "<p>Insure a parcel worth more than 100 euros when you buy its label.</p>",
    ),
}


@dataclass
class World:
    site: HelpSite
    settings: Settings
    embedder: Any
    session_factory: Any
    source_id: int

    def publish(self, paths: list[str], **routes: Route) -> None:
        """The sitemap lists ``paths``; every article answers, unless ``routes`` says otherwise."""
        self.site.routes.clear()
        self.site.routes["/sitemap.xml"] = Route(sitemap([self.site.url(p) for p in paths]), XML)
        for path, (title, body) in ARTICLES.items():
            self.site.routes[path] = Route(page(title, body))
        for name, route in routes.items():
            self.site.routes["/" + name] = route

    def sync(self, *, confirm: bool = False) -> SyncRun:
        return sync_source(
            self.source_id,
            self.settings,
            session_factory=self.session_factory,
            embedder=self.embedder,
            confirm=confirm,
        )

    def urls(self) -> set[str]:
        with self.session_factory() as session:
            return {
                row.url for row in cards.cards_with_id_prefix(session, "") if row.url is not None
            }

    def member_sources(self, question: str) -> set[str]:
        """The source URLs a member's answer to ``question`` carries, asked over HTTP."""
        runtime = Runtime.from_settings(self.settings, embedder=self.embedder)
        try:
            with runtime.session_factory() as session:
                _, token = users.create_user(session, f"m-{uuid.uuid4().hex[:8]}", "member")
            reply = TestClient(create_app(runtime)).post(
                "/api/v1/chat",
                json={"message": question},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert reply.status_code == 200, reply.text
            return {s["url"] for s in reply.json()["sources"]}
        finally:
            runtime.close()


@pytest.fixture
def world(tmp_path: Any, embedder: Any) -> Iterator[World]:
    settings = load_settings(
        data_dir=tmp_path / "data",
        database_url=None,
        chroma_url=None,
        reranker_enabled=False,
        rate_limit_per_minute=0,
        crawl_allow_private=True,
        crawl_timeout_s=2.0,
        crawl_delay_s=0.0,
        sync_stale_after=2,
    )
    schema.migrate(settings.sqlalchemy_url)
    engine = db.make_engine(settings.sqlalchemy_url)
    session_factory = db.make_session_factory(engine)
    with HelpSite() as site:
        with session_factory() as session:
            source = kb_sources.add_source(
                session, "site", site.url("/sitemap.xml"), license=LICENSE, now=utcnow()
            )
        yield World(site, settings, embedder, session_factory, source.id)
    engine.dispose()


def test_a_sync_adds_updates_and_removes_what_is_gone(world: World) -> None:
    world.publish(["/void", "/reprint", "/customs"])
    first = world.sync()
    assert (first.status, first.added, first.removed) == ("applied", 3, 0), first
    customs = world.site.url("/customs")
    assert customs in world.member_sources("What customs form does a parcel going abroad need?")

    # /customs leaves the sitemap, /reprint answers 410, /insurance is new, /void changes.
    title, _ = ARTICLES["/void"]
    world.publish(
        ["/void", "/reprint", "/insurance"],
        reprint=Route(b"gone", status=410),
        void=Route(page(title, "<p>Void an unused label within 60 days of buying it.</p>")),
    )
    second = world.sync()
    assert (second.status, second.added, second.updated, second.removed) == (
        "applied",
        1,
        1,
        2,
    ), second
    assert world.urls() == {world.site.url("/void"), world.site.url("/insurance")}
    asked = world.member_sources("What customs form does a parcel going abroad need?")
    assert customs not in asked and world.site.url("/reprint") not in asked
    with world.session_factory() as session:
        source = kb_sources.get_source(session, world.source_id)
        assert len(source.card_ids) == 2 and source.last_sync_at is not None
        assert [r.status for r in kb_sources.source_runs(session, world.source_id)] == [
            "applied",
            "applied",
        ]


def test_a_page_that_times_out_is_kept_then_marked_stale(world: World) -> None:
    world.publish(["/void", "/insurance"])
    assert world.sync().added == 2
    slow = Route(page(*ARTICLES["/insurance"]), delay_s=5.0)
    world.publish(["/void", "/insurance"], insurance=slow)
    once = world.sync()
    assert once.status == "applied" and once.removed == 0 and once.stale == (), once
    assert world.site.url("/insurance") in world.urls()
    twice = world.sync()
    assert twice.stale == (world.site.url("/insurance"),), twice
    world.publish(["/void", "/insurance"])
    assert world.sync().stale == ()


def test_a_sitemap_that_empties_is_held_until_confirmed(world: World) -> None:
    world.publish(["/void", "/reprint", "/customs", "/insurance"])
    assert world.sync().added == 4
    world.publish(["/void"])  # 1 of 4: fewer than half, as a broken deploy would look
    held = world.sync()
    assert held.status == "held" and "fewer than half" in held.note, held
    assert f"citewall sync {world.source_id} --confirm" in held.note
    assert len(world.urls()) == 4  # nothing written
    world.publish([])
    assert world.sync().status == "held"
    applied = world.sync(confirm=True)
    assert (applied.status, applied.removed) == ("applied", 4), applied
    assert world.urls() == set()


def test_an_unreachable_site_fails_and_keeps_its_cards(world: World) -> None:
    world.publish(["/void", "/reprint"])
    assert world.sync().added == 2
    world.site.routes["/sitemap.xml"] = Route(b"down", status=503)
    failed = world.sync()
    assert failed.status == "failed" and "could not be read" in failed.note, failed
    assert len(world.urls()) == 2


def test_removing_a_source_deletes_its_cards_and_keeps_its_runs(world: World) -> None:
    world.publish(["/void", "/reprint"])
    world.sync()
    source, deleted = remove_source(
        world.source_id,
        world.settings,
        session_factory=world.session_factory,
        embedder=world.embedder,
    )
    assert deleted == 2 and world.urls() == set() and source.id == world.source_id
    with world.session_factory() as session:
        assert kb_sources.list_sources(session) == []
        assert kb_sources.source_runs(session, world.source_id) == []  # runs kept, unlinked
