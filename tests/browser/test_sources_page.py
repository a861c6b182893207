"""The admin Sources page in Chromium against a real `citewall serve`: an admin registers a
loopback help center on the page and syncs it with "Sync now"; a member then asks through the
chat and gets the new page as a source. The server keeps no sync schedule
(``CITEWALL_SYNC_SCHEDULER=off``), so only the page's sync can have brought the page in."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, expect

from citewall_evals.helpsite import XML, HelpSite, Route, page, sitemap

from .conftest import CitewallServer, start_server, stop_server
from .ui import ask, sign_in, sse_events

CUSTOMS = (
    "Customs forms for parcels abroad",
    "<p>Parcels leaving the country need a customs declaration. The CN23 form lists the "
    "contents and their value; print it with the label and attach it to the parcel.</p>",
)
QUESTION = "Which customs form does a parcel going abroad need?"


@pytest.fixture(scope="module")
def sources_server(
    tmp_path_factory: pytest.TempPathFactory, kb_fixture_dir: Path
) -> Iterator[tuple[CitewallServer, HelpSite]]:
    routes = {
        "/guides/customs": Route(page(*CUSTOMS)),
        "/robots.txt": Route(b"User-agent: *\nAllow: /\n", content_type="text/plain"),
    }
    with HelpSite(routes) as site:
        site.routes["/sitemap.xml"] = Route(sitemap([site.url("/guides/customs")]), XML)
        server = start_server(
            tmp_path_factory.mktemp("sources"),
            [kb_fixture_dir / "small.jsonl"],
            {"mia": "member", "ada": "admin"},
            {
                "CITEWALL_GENERATOR": "extractive",
                "CITEWALL_CRAWL_ALLOW_PRIVATE": "1",
                "CITEWALL_CRAWL_DELAY_S": "0",
                "CITEWALL_CALIBRATION": "false",
                "CITEWALL_SYNC_SCHEDULER": "off",
            },
        )
        try:
            yield server, site
        finally:
            stop_server(server)


def final_sources(body: str) -> list[dict[str, Any]]:
    name, data = sse_events(body)[-1]
    assert name == "final", name
    sources: list[dict[str, Any]] = json.loads(data)["sources"]
    return sources


def test_an_admin_adds_and_syncs_a_site_and_a_member_gets_its_page(
    context: BrowserContext,
    sources_server: tuple[CitewallServer, HelpSite],
    screenshot: Callable[[Any, str], None],
) -> None:
    server, site = sources_server
    customs = site.url("/guides/customs")

    member = context.new_page()
    sign_in(member, server.base_url, server.tokens["mia"])
    before = ask(member, QUESTION)
    assert customs not in {s.get("url") for s in final_sources(before.stream_body)}

    admin = context.new_page()
    sign_in(admin, server.base_url, server.tokens["ada"], path="/admin/sources")
    expect(admin.get_by_role("heading", name="Sources", exact=True)).to_be_visible()
    expect(admin.get_by_test_id("sources-empty")).to_be_visible()
    form = admin.get_by_test_id("source-form")
    form.get_by_label("URL (a sitemap, or one page)").fill(site.url("/sitemap.xml"))
    form.get_by_label("Licence of its pages (optional)").fill("CC-BY-4.0")
    form.get_by_role("button", name="Register").click()
    expect(admin.get_by_test_id("source-message")).to_contain_text("Registered as source 1")
    row = admin.locator("tr[data-source='1']")
    expect(row).to_contain_text("never synced")

    row.get_by_role("button", name="Sync now").click()
    result = row.get_by_test_id("sync-result")
    expect(result).to_contain_text("applied", timeout=60_000)
    expect(result).to_contain_text("added 1")
    expect(row.get_by_test_id("source-cards")).to_have_text("1")
    row.get_by_role("button", name="History").click()
    expect(admin.get_by_test_id("source-history")).to_contain_text("applied")
    screenshot(admin, "sources-page-synced")

    member.reload()
    after = ask(member, QUESTION)
    assert customs in {s.get("url") for s in final_sources(after.stream_body)}, after.answer_text
    expect(
        member.locator("li.turn-assistant").last.locator("[data-testid=answer]")
    ).to_contain_text("CN23")
