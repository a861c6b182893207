"""The admin pages in Chromium against a real server: analytics chart, full conversation view,
card search, retrieval-event filters."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from .conftest import CitewallServer, api
from .ui import BrowserTraps, sign_in


@pytest.fixture(scope="module")
def member_turn(demo_server: CitewallServer) -> dict[str, Any]:
    """A member conversation of two turns, so the admin pages have data to show."""
    first = api(
        demo_server,
        "mia",
        "POST",
        "/api/v1/chat",
        json={"message": "How do I void an unused label?", "conversation_id": None},
    )
    api(
        demo_server,
        "mia",
        "POST",
        "/api/v1/chat",
        json={
            "message": "Where do I download invoices?",
            "conversation_id": first["conversation_id"],
        },
    )
    return dict(first)


def test_admin_analytics_renders_its_chart(
    page: Page,
    demo_server: CitewallServer,
    member_turn: dict[str, Any],
    screenshot: Callable[[Any, str], None],
) -> None:
    traps = BrowserTraps().attach(page)
    sign_in(page, demo_server.base_url, demo_server.tokens["ada"], path="/admin/analytics")
    expect(page.get_by_role("heading", name="Entry performance")).to_be_visible()
    chart = page.locator("svg.chart-cards")
    expect(chart).to_be_visible()
    # The chart is drawn from the API's rows: same cards, same counts.
    rows = api(demo_server, "ada", "GET", "/api/v1/admin/analytics/entry-performance?period=day")
    retrieved: dict[str, int] = {}
    for r in rows:
        retrieved[r["card_id"]] = retrieved.get(r["card_id"], 0) + r["times_retrieved"]
    drawn = chart.locator("g.chart-row").evaluate_all("gs => gs.map(g => g.dataset.card)")
    assert set(drawn) <= set(retrieved)
    assert len(drawn) == min(15, len(retrieved))
    assert retrieved[drawn[0]] == max(retrieved.values()), "busiest card first"
    widths = [
        float(w)
        for w in chart.locator("rect.bar-retrieved[height='11']").evaluate_all(
            "rs => rs.map(r => r.getAttribute('width'))"
        )
    ]
    assert max(widths) > 1, "no bar has a length: the chart has no data"
    for cited in member_turn["sources"]:
        assert cited["card_id"] in retrieved
    expect(page.locator("svg.chart-trend circle.dot-cite").first).to_be_attached()
    expect(page.locator("table.performance-table tbody tr")).to_have_count(len(rows))
    screenshot(page, "admin-analytics")
    page.get_by_label("Period", exact=True).select_option("all")
    expect(page.locator("svg.chart-trend")).to_have_attribute("data-periods", "1")
    assert traps.csp_violations == [] and traps.page_errors == []


def test_admin_conversation_view_shows_markers_and_every_source(
    page: Page,
    demo_server: CitewallServer,
    member_turn: dict[str, Any],
    screenshot: Callable[[Any, str], None],
) -> None:
    conv_id = member_turn["conversation_id"]
    stored = api(demo_server, "ada", "GET", f"/api/v1/admin/conversations/{conv_id}")
    sign_in(page, demo_server.base_url, demo_server.tokens["ada"], path="/admin/conversations")
    page.locator(f"a[href='/admin/conversations/{conv_id}']").click()
    expect(page).to_have_url(re.compile(f"/admin/conversations/{conv_id}$"))
    answers = page.locator("[data-testid=admin-answer]")
    expect(answers).to_have_count(2)
    assistant = [m for m in stored["messages"] if m["role"] == "assistant"]
    for shown, message in zip(answers.all_inner_texts(), assistant, strict=True):
        for marker in re.findall(r"\[\d+\]", message["content"]):
            assert marker in shown, f"marker {marker} hidden from the admin"
    # Every stored source is listed, internal ones marked as such.
    tables = page.locator("table.sources-table")
    for i, message in enumerate(assistant):
        rows = tables.nth(i).locator("tbody tr")
        expect(rows).to_have_count(len(message["sources"]))
        kinds = rows.locator(".badge").all_inner_texts()
        expected = ["external" if s.get("source_url") else "internal" for s in message["sources"]]
        assert kinds == expected
    expect(page.locator("table.events-table tbody tr")).to_have_count(
        len(stored["retrieval_events"])
    )
    screenshot(page, "admin-conversation")


def test_admin_cards_search_and_event_filters(
    page: Page, demo_server: CitewallServer, member_turn: dict[str, Any]
) -> None:
    sign_in(page, demo_server.base_url, demo_server.tokens["ada"], path="/admin/cards")
    page.get_by_label("Kind").select_option("internal")
    expect(page.locator("table.cards-table tbody tr").first).to_be_visible()
    # The filtered page replaces the unfiltered one on its own request: wait for it.
    expect(page.locator("table.cards-table .badge").filter(has_text="external")).to_have_count(0)
    assert set(page.locator("table.cards-table .badge").all_inner_texts()) == {"internal"}
    page.get_by_label("Kind").select_option("all")
    page.get_by_label("Search").fill("label")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("table.cards-table tbody tr").first).to_be_visible()
    # The table lists what the API answers for the same search (first page), and says how many.
    expected = api(demo_server, "ada", "GET", "/api/v1/admin/cards?q=label&limit=25&offset=0")
    assert expected["total"] < api(demo_server, "ada", "GET", "/api/v1/admin/cards")["total"]
    expect(page.get_by_role("status")).to_have_text(f"{expected['total']} cards")
    ids = page.locator("table.cards-table tbody td:nth-child(2)")
    expect(ids).to_have_text([c["id"] for c in expected["cards"]])

    page.get_by_role("link", name="Retrieval events").click()
    expect(page.locator("table.events-table tbody tr").first).to_be_visible()
    # Filter by the path the member's turn really took; every row shown has that path.
    path = member_turn["hybrid_path"] or "none"
    others = {"full", "rrf_only", "dense_only"} - {path}
    page.get_by_label("Path").select_option(path)
    path_cells = page.locator("table.events-table tbody td.path-cell")
    expect(path_cells.first).to_have_text(path)
    for other in others:
        expect(path_cells.filter(has_text=other)).to_have_count(0)
    card = member_turn["sources"][0]["card_id"]
    page.get_by_label("Card id").fill(card)
    page.get_by_role("button", name="Apply").click()
    card_cells = page.locator("table.events-table tbody td.card-cell")
    expect(card_cells.first).to_have_text(card)
    expect(card_cells).to_have_text([card] * card_cells.count())


def test_admin_conversation_view_renders_stored_sources_that_are_not_objects(
    page: Page, demo_server: CitewallServer, screenshot: Callable[[Any, str], None]
) -> None:
    """A null or double-encoded source item (a legacy writer, a hand edit) is shown marked."""
    from sqlalchemy import update

    from citewall.config import load_settings
    from citewall.storage import db
    from citewall.storage.models import Message

    turn = api(
        demo_server,
        "mia",
        "POST",
        "/api/v1/chat",
        json={"message": "How do I void an unused label?", "conversation_id": None},
    )
    conv_path = f"/api/v1/admin/conversations/{turn['conversation_id']}"
    good = api(demo_server, "ada", "GET", conv_path)["messages"][1]["sources"][0]
    settings = load_settings(data_dir=Path(demo_server.env["CITEWALL_DATA_DIR"]), database_url=None)
    engine = db.make_engine(settings.sqlalchemy_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                update(Message)
                .where(Message.id == turn["message_id"])
                .values(sources=[None, json.dumps(good), good])
            )
    finally:
        engine.dispose()

    traps = BrowserTraps().attach(page)
    sign_in(
        page,
        demo_server.base_url,
        demo_server.tokens["ada"],
        path=f"/admin/conversations/{turn['conversation_id']}",
    )
    rows = page.locator("table.sources-table tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_contain_text("stored source is not an object (null)")
    expect(rows.nth(1)).to_contain_text("stored source is not an object (a string)")
    expect(rows.nth(2)).to_contain_text(good["card_id"])
    screenshot(page, "admin-conversation-unreadable-source")
    assert traps.page_errors == [] and traps.csp_violations == []
