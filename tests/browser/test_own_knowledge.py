"""Bring your own knowledge, end to end in Chromium: a help center crawled by its sitemap and a
folder holding an internal PDF, ingested with ``citewall ingest`` as a user runs it. A member
asks; the sources panel links the crawled page's verified URL; the PDF's knowledge reaches the
member only as prose, never as a source."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from ingest.documents.files import pdf_bytes, write
from playwright.sync_api import BrowserContext, expect

from citewall_evals.helpsite import XML, HelpSite, Route, page, sitemap

from .conftest import CitewallServer, start_server, stop_server
from .ui import anchors, ask, sign_in, sse_events

RETURNS = (
    "Returning a parcel",
    "<p>To send a parcel back, open the order and choose Start a return. Return labels are "
    "free for 30 days after delivery; after that the return shipping is charged to the card on "
    "file. Print the return label and drop the parcel at any carrier point.</p>",
)
CUSTOMS = (
    "Customs forms for parcels abroad",
    "<p>Parcels to another country need a customs declaration. The CN22 form covers parcels "
    "under 2 kg, the CN23 form heavier ones. Print it with the label.</p>",
)
PLAYBOOK = (
    "Lost parcel claims playbook. A lost parcel claim is escalated to the carrier desk once "
    "the tracking has not moved for nine days. The agent files the claim with reference code "
    "LPX-CLAIM-77 and promises the merchant an answer within five working days."
)
#: What the member may be told (the PDF's "Tell the member" page): the only part quoted.
TELL = (
    "A lost parcel claim is escalated to the carrier once the tracking has not moved for nine "
    "days, and you get an answer within five working days."
)
RETURN_QUESTION = "How long are return labels free after delivery?"
PLAYBOOK_QUESTION = "When is a lost parcel claim escalated to the carrier desk?"


@pytest.fixture(scope="module")
def own_knowledge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[CitewallServer, str]]:
    tmp = tmp_path_factory.mktemp("own")
    docs = tmp / "playbooks"
    write(
        docs / "claims" / "lost-parcels.pdf",
        pdf_bytes([PLAYBOOK, "Tell the member", TELL], title="Lost parcel claims"),
    )
    routes: dict[str, Route] = {
        "/guides/returns": Route(page(*RETURNS)),
        "/guides/customs": Route(page(*CUSTOMS)),
        "/robots.txt": Route(b"User-agent: *\nAllow: /\n", content_type="text/plain"),
    }
    with HelpSite(routes) as site:
        site.routes["/sitemap.xml"] = Route(
            sitemap([site.url("/guides/returns"), site.url("/guides/customs")]), content_type=XML
        )
        server = start_server(
            tmp,
            [docs],
            {"mia": "member"},
            {"CITEWALL_GENERATOR": "extractive", "CITEWALL_CRAWL_ALLOW_PRIVATE": "1"},
            more_ingests=[["--site", site.url("/sitemap.xml"), "--license", "CC-BY-4.0"]],
        )
        try:
            yield server, site.url("/guides/returns")
        finally:
            stop_server(server)


def final_event(body: str) -> dict[str, Any]:
    name, data = sse_events(body)[-1]
    assert name == "final", name
    final: dict[str, Any] = json.loads(data)
    return final


def test_the_member_sees_the_crawled_page_url_and_the_pdf_only_as_prose(
    context: BrowserContext,
    own_knowledge: tuple[CitewallServer, str],
    screenshot: Callable[[Any, str], None],
) -> None:
    server, returns_url = own_knowledge
    tab = context.new_page()
    sign_in(tab, server.base_url, server.tokens["mia"])

    ask(tab, RETURN_QUESTION)
    turn = tab.locator("li.turn-assistant").last
    expect(turn.locator("[data-testid=answer]")).to_contain_text("30 days")
    turn.locator(".chip").first.click()
    dialog = tab.get_by_role("dialog")
    expect(dialog).to_be_visible()
    assert returns_url in [a["href"] for a in anchors(tab, "[role=dialog]")], dialog.inner_html()
    screenshot(tab, "own-knowledge-crawled-source")
    tab.keyboard.press("Escape")

    answered = ask(tab, PLAYBOOK_QUESTION)
    final = final_event(answered.stream_body)
    assert "nine days" in final["answer"], final["answer"]
    assert all(source["url"] for source in final["sources"])  # external cards only
    assert "lost-parcels" not in json.dumps(final["sources"])
    turn = tab.locator("li.turn-assistant").last
    expect(turn.locator("[data-testid=answer]")).to_contain_text("nine days")
    links = [a["href"] for a in anchors(tab, "li.turn-assistant >> nth=-1")]
    assert not [h for h in links if h and "lost-parcels" in h], links
    assert "LPX-CLAIM-77" not in json.dumps(final["sources"])
    assert "LPX-CLAIM-77" not in final["answer"] and "agent" not in final["answer"]
