"""The admin pages of issue 15 in Chromium against a real server on the demo KB.

Defect 9 (admin): users shown by name, empty results as a clear empty state (no bare headers,
no "0 of 0"), retrieval events linked to their conversation, a page per card, scrollable
metadata boxes reachable by keyboard, and a trend chart with a legend and labels readable on a
phone. Then members' feedback in analytics: a helpful rate per card and the worst-rated answers,
each linking to its conversation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import pairwise
from typing import Any
from urllib.parse import quote

import pytest
from playwright.sync_api import Browser, Page, expect

from .conftest import CitewallServer, api
from .ui import BrowserTraps, install_recorders, sign_in

PHONE = {"width": 390, "height": 844}
#: Smallest rendered font size (px) a chart label may have.
MIN_LABEL_PX = 11.0

#: Every element under the page content that scrolls, and whether a keyboard can reach it.
SCROLLERS = """
() => [...document.querySelectorAll("main *")].filter((el) => {
  const s = getComputedStyle(el);
  const scrolls = (o) => o === "auto" || o === "scroll";
  return (scrolls(s.overflowX) && el.scrollWidth > el.clientWidth + 1)
      || (scrolls(s.overflowY) && el.scrollHeight > el.clientHeight + 1);
}).map((el) => ({
  tag: el.tagName.toLowerCase(),
  cls: el.className,
  tabindex: el.tabIndex,
  label: el.getAttribute("aria-label") || "",
}))
"""

#: Each chart label's font size as drawn on screen (CSS size times the SVG's scale).
CHART_LABEL_PX = """
() => [...document.querySelectorAll("svg.chart text")].map((t) => ({
  text: t.textContent,
  px: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a,
}))
"""


@pytest.fixture(scope="module")
def member_conversation(demo_server: CitewallServer) -> dict[str, Any]:
    """A member conversation of two answered turns, so the admin pages have data to show."""
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
            "message": "How long does the refund take?",
            "conversation_id": first["conversation_id"],
        },
    )
    return dict(first)


@pytest.fixture
def phone(browser: Browser) -> Iterator[Page]:
    """A page in a phone-sized context (390x844)."""
    ctx = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    install_recorders(ctx)
    page = ctx.new_page()
    yield page
    ctx.close()


def test_conversations_show_the_member_by_name(
    page: Page, demo_server: CitewallServer, member_conversation: dict[str, Any]
) -> None:
    """Defect 9: users were shown as numbers."""
    conv_id = member_conversation["conversation_id"]
    sign_in(page, demo_server.base_url, demo_server.tokens["ada"], path="/admin/conversations")
    row = page.locator("table.conversations-table tbody tr").filter(
        has=page.locator(f"a[href='/admin/conversations/{conv_id}']")
    )
    expect(row.locator("td.user-cell")).to_have_text("mia")
    row.get_by_role("link").click()
    expect(page.get_by_test_id("conversation-user")).to_have_text("mia")


def test_empty_results_show_an_empty_state(
    page: Page, demo_server: CitewallServer, member_conversation: dict[str, Any]
) -> None:
    """Defect 9: empty results showed bare table headers and "0 of 0"."""
    traps = BrowserTraps().attach(page)
    sign_in(page, demo_server.base_url, demo_server.tokens["ada"], path="/admin/cards")
    page.get_by_label("Search").fill("zzqx-no-such-card")
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_test_id("empty-state")).to_have_text(
        "No cards match \u201czzqx-no-such-card\u201d."
    )
    main = page.locator("main")
    expect(main.locator("table")).to_have_count(0)
    expect(main.locator("nav.pager")).to_have_count(0)
    assert "0 of 0" not in main.inner_text()

    page.get_by_role("link", name="Retrieval events").click()
    expect(page.locator("table.events-table tbody tr").first).to_be_visible()
    page.get_by_label("Card id").fill("zzqx-no-such-card")
    page.get_by_role("button", name="Apply").click()
    expect(page.get_by_test_id("empty-state")).to_have_text(
        "No retrieval events match these filters."
    )
    expect(main.locator("table")).to_have_count(0)
    expect(main.locator("nav.pager")).to_have_count(0)
    assert traps.page_errors == [] and traps.csp_violations == []


def test_retrieval_events_link_to_their_conversation(
    page: Page, demo_server: CitewallServer, member_conversation: dict[str, Any]
) -> None:
    """Defect 9: events did not link to their conversation."""
    newest = api(demo_server, "ada", "GET", "/api/v1/admin/analytics/retrieval-events?limit=1")[0]
    sign_in(page, demo_server.base_url, demo_server.tokens["ada"], path="/admin/events")
    first = page.locator("table.events-table tbody tr").first
    link = first.locator("td.query-cell a")
    expect(link).to_have_attribute("href", f"/admin/conversations/{newest['conversation_id']}")
    expect(link).to_have_text(newest["query"])
    link.click()
    expect(page).to_have_url(re.compile(f"/admin/conversations/{newest['conversation_id']}$"))
    expect(page.locator("[data-testid=admin-answer]").first).to_be_visible()


def test_a_card_has_a_page_of_its_own(
    page: Page,
    demo_server: CitewallServer,
    member_conversation: dict[str, Any],
    screenshot: Callable[[Any, str], None],
) -> None:
    """Defect 9: cards had no detail page."""
    traps = BrowserTraps().attach(page)
    card = next(c for c in demo_server.kb_cards if c.get("url") and c.get("metadata"))
    internal = next(c for c in demo_server.kb_cards if not c.get("url"))
    sign_in(page, demo_server.base_url, demo_server.tokens["ada"], path="/admin/cards")
    page.get_by_label("Search").fill(card["title"])
    page.get_by_role("button", name="Search").click()
    page.locator("table.cards-table").get_by_role("link", name=card["title"], exact=True).click()
    expect(page).to_have_url(re.compile(f"/admin/cards/{re.escape(quote(card['id'], safe=''))}$"))
    stored = api(demo_server, "ada", "GET", f"/api/v1/admin/cards/{quote(card['id'], safe='')}")
    detail = page.get_by_test_id("card-detail")
    expect(detail.get_by_role("heading", level=1)).to_have_text(card["title"])
    expect(detail.get_by_test_id("card-kind")).to_have_text("external")
    link = detail.get_by_test_id("card-url").get_by_role("link")
    expect(link).to_have_attribute("href", page.evaluate("u => new URL(u).href", card["url"]))
    expect(detail.get_by_test_id("card-license")).to_have_text(card.get("license") or "Not stated")
    expect(detail.get_by_test_id("card-body")).to_have_text(stored["body"])
    for key in card["metadata"]:
        expect(detail.get_by_test_id("card-metadata")).to_contain_text(f'"{key}"')
    screenshot(page, "admin-card")

    # An internal card, opened directly by its address (a reload lands on the same page).
    page.goto(f"{demo_server.base_url}/admin/cards/{quote(internal['id'], safe='')}")
    expect(detail.get_by_role("heading", level=1)).to_have_text(internal["title"])
    expect(detail.get_by_test_id("card-kind")).to_have_text("internal")
    expect(detail.get_by_test_id("card-url").get_by_role("link")).to_have_count(0)
    assert traps.page_errors == [] and traps.csp_violations == []


def test_scrollable_boxes_are_reachable_by_keyboard(
    phone: Page, demo_server: CitewallServer, member_conversation: dict[str, Any]
) -> None:
    """Defect 9: metadata boxes scrolled but could not be reached by keyboard."""
    conv_id = member_conversation["conversation_id"]
    sign_in(phone, demo_server.base_url, demo_server.tokens["ada"], path="/admin/cards")
    expect(phone.locator("table.cards-table tbody tr").first).to_be_visible()
    for path in ("/admin/cards", f"/admin/conversations/{conv_id}", "/admin/events"):
        phone.goto(demo_server.base_url + path)
        expect(phone.locator("main table").first).to_be_visible()
        scrollers = phone.evaluate(SCROLLERS)
        assert scrollers, f"{path}: nothing scrolls on a phone; the check would prove nothing"
        stuck = [s for s in scrollers if s["tabindex"] < 0 or not s["label"]]
        assert stuck == [], f"{path}: boxes a keyboard cannot reach: {stuck}"

    # A metadata box: Tab reaches it, the arrow keys scroll it.
    phone.goto(demo_server.base_url + "/admin/cards")
    box = phone.locator("table.cards-table .json").first
    expect(box).to_have_attribute("aria-label", re.compile("^Metadata of "))
    box.focus()
    phone.keyboard.press("Shift+Tab")
    phone.keyboard.press("Tab")
    assert phone.evaluate("() => document.activeElement.classList.contains('json')")
    box.evaluate("el => el.classList.add('probe')")
    tall = box.evaluate("el => el.scrollHeight > el.clientHeight")
    if tall:
        phone.keyboard.press("ArrowDown")
        phone.wait_for_function("() => document.querySelector('.probe').scrollTop > 0")


def test_trend_chart_has_a_legend_and_readable_labels_on_a_phone(
    phone: Page,
    demo_server: CitewallServer,
    member_conversation: dict[str, Any],
    screenshot: Callable[[Any, str], None],
) -> None:
    """Defect 9: the trend chart had no legend and ~6 px labels on a phone."""
    sign_in(phone, demo_server.base_url, demo_server.tokens["ada"], path="/admin/analytics")
    trend = phone.locator("figure").filter(has=phone.locator("svg.chart-trend"))
    expect(trend.locator(".chart-legend")).to_contain_text("Times retrieved (bars, right scale)")
    expect(trend.locator(".chart-legend")).to_contain_text("Cite rate (line, left scale)")
    phone.wait_for_function(
        "() => document.querySelector('svg.chart-trend').viewBox.baseVal.width < 400"
    )
    labels = phone.evaluate(CHART_LABEL_PX)
    assert len(labels) >= 4
    small = [label for label in labels if label["px"] < MIN_LABEL_PX]
    assert small == [], f"chart labels smaller than {MIN_LABEL_PX} px on a phone: {small[:5]}"
    # Date labels do not overlap each other.
    boxes = phone.locator("svg.chart-trend text.axis-label").evaluate_all(
        "ts => ts.filter(t => /\\d{4}-\\d\\d-\\d\\d|all time/.test(t.textContent))"
        ".map(t => { const r = t.getBoundingClientRect(); return [r.left, r.right]; })"
    )
    for (_, right), (left, _) in pairwise(boxes):
        assert right <= left, boxes
    screenshot(phone, "admin-analytics-phone")


def test_feedback_in_analytics(
    page: Page,
    demo_server: CitewallServer,
    member_conversation: dict[str, Any],
    screenshot: Callable[[Any, str], None],
) -> None:
    """Feedback: a helpful rate per card and the worst-rated answers, linked to the conversation."""
    conv_id = member_conversation["conversation_id"]
    answers = [
        m
        for m in api(demo_server, "mia", "GET", f"/api/v1/conversations/{conv_id}")["messages"]
        if m["role"] == "assistant"
    ]
    first, second = answers[0], answers[1]
    for message, rating, comment in ((first, "up", None), (second, "down", "Not what I asked")):
        api(
            demo_server,
            "mia",
            "PUT",
            f"/api/v1/messages/{message['id']}/feedback",
            json={"rating": rating, "comment": comment},
        )
    report = api(demo_server, "ada", "GET", "/api/v1/admin/analytics/feedback?limit=20")
    assert report["down"] >= 1 and report["cards"], report

    traps = BrowserTraps().attach(page)
    sign_in(page, demo_server.base_url, demo_server.tokens["ada"], path="/admin/analytics")
    feedback = page.locator("section.admin-feedback")
    expect(feedback.get_by_test_id("feedback-summary")).to_contain_text(
        f"{report['up']} helpful, {report['down']} unhelpful"
    )
    # Each card's helpful rate, as the API computes it.
    for card in report["cards"]:
        row = feedback.locator(f"tr.feedback-card[data-card='{card['card_id']}']")
        rate = card["helpful_rate"]
        expect(row.locator(".helpful-rate")).to_have_text(
            "—" if rate is None else f"{rate * 100:.1f}%"
        )
    # Entry-performance rows carry the same thumbs.
    rows = api(demo_server, "ada", "GET", "/api/v1/admin/analytics/entry-performance?period=day")
    rated = next(r for r in rows if r["helpful"] or r["unhelpful"])
    table_row = page.locator(f"table.performance-table tr[data-card='{rated['card_id']}']").first
    expect(table_row.locator(".helpful-rate")).not_to_have_text("—")

    # The worst-rated answer first, linking to its conversation.
    worst = feedback.locator("table.worst-answers tbody tr").first
    expect(worst.get_by_test_id("rating")).to_have_text("unhelpful")
    expect(worst).to_contain_text("Not what I asked")
    expect(worst).to_contain_text("mia")
    screenshot(page, "admin-analytics-feedback")
    worst.get_by_role("link").click()
    expect(page).to_have_url(re.compile(f"/admin/conversations/{conv_id}$"))
    assert traps.page_errors == [] and traps.csp_violations == []
