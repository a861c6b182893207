"""Admin card pages reached by address in Chromium, for the ids ingest really makes.

A crawled page's id and a document's in a folder always hold a dot
(``site-127-0-0-1-...-<hash>.guides-returns-<hash>``, ``claims.lost-parcels-pdf``). The server
took such a last path segment for a missing file and answered its 404, so a reload or a link
pasted into a new tab showed ``{"detail":"not found"}`` instead of the card (finding 6).
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from ingest.documents.files import pdf_bytes, write
from playwright.sync_api import Browser, expect

from citewall_evals.helpsite import XML, HelpSite, Route, page, sitemap

from .conftest import CitewallServer, api, start_server, stop_server
from .ui import BrowserTraps, install_recorders, sign_in

RETURNS = (
    "Returning a parcel",
    "<p>To send a parcel back, open the order and choose Start a return. Return labels are "
    "free for 30 days after delivery.</p>",
)
PLAYBOOK = (
    "Lost parcel claims playbook. A lost parcel claim is escalated to the carrier desk once "
    "the tracking has not moved for nine days."
)


@pytest.fixture(scope="module")
def dotted_ids_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CitewallServer]:
    """A server over a crawled help page and a PDF in a folder, ingested as a user does."""
    tmp = tmp_path_factory.mktemp("deep-links")
    docs = tmp / "playbooks"
    write(docs / "claims" / "lost-parcels.pdf", pdf_bytes([PLAYBOOK], title="Lost parcel claims"))
    routes = {
        "/guides/returns": Route(page(*RETURNS)),
        "/robots.txt": Route(b"User-agent: *\nAllow: /\n", content_type="text/plain"),
    }
    with HelpSite(routes) as site:
        returns = site.url("/guides/returns")
        site.routes["/sitemap.xml"] = Route(sitemap([returns]), content_type=XML)
        server = start_server(
            tmp,
            [docs],
            {"ada": "admin"},
            {"CITEWALL_CRAWL_ALLOW_PRIVATE": "1"},
            more_ingests=[["--site", site.url("/sitemap.xml"), "--license", "CC-BY-4.0"]],
        )
        try:
            yield server
        finally:
            stop_server(server)


def test_a_card_page_with_a_dot_in_its_id_reloads_and_deep_links(
    browser: Browser, dotted_ids_server: CitewallServer
) -> None:
    server = dotted_ids_server
    cards = api(server, "ada", "GET", "/api/v1/admin/cards", params={"limit": 50})["cards"]
    dotted = {c["title"]: c["id"] for c in cards if "." in c["id"]}
    assert set(dotted) == {"Returning a parcel", "Lost parcel claims"}, cards

    for title, card_id in dotted.items():
        path = f"/admin/cards/{quote(card_id, safe='')}"
        # Deep link: a new tab opened at the card's address signs in and shows the card.
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        install_recorders(ctx)
        tab = ctx.new_page()
        traps = BrowserTraps().attach(tab)
        sign_in(tab, server.base_url, server.tokens["ada"], path=path)
        detail = tab.get_by_test_id("card-detail")
        expect(detail.get_by_role("heading", level=1)).to_have_text(title)
        # Reload: the same page again, not the server's missing-file 404.
        tab.reload()
        expect(detail.get_by_role("heading", level=1)).to_have_text(title)
        assert tab.url == server.base_url + path
        assert traps.page_errors == [] and traps.csp_violations == [], traps
        ctx.close()
        raw = httpx.get(server.base_url + path, timeout=30)
        assert raw.status_code == 200 and raw.headers["content-type"].startswith("text/html")

    # A missing asset is still a 404, never index.html.
    for missing in ("/assets/missing.js", "/favicon.png"):
        r = httpx.get(server.base_url + missing, timeout=30)
        assert (r.status_code, r.json()) == (404, {"detail": "not found"}), missing
