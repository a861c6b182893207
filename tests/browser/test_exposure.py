"""The Exposure admin page in Chromium against a real server: a member's chat answers draw on
internal cards of the demo KB, the exposure budget then restricts the next answer, and an admin
sees the member ranked and flagged, drills down to the answers and opens the conversation."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from .conftest import CitewallServer, api, start_server, stop_server
from .ui import BrowserTraps, ask, sign_in

#: Answered from internal playbooks of the demo KB (duplicate label charges).
INTERNAL_QUESTION = "I got charged twice for one order's label, clicked buy once"
FOLLOW_UP = "A merchant was charged twice for the same label, how do we handle duplicate charges?"


@pytest.fixture(scope="module")
def budget_server(
    tmp_path_factory: pytest.TempPathFactory, demo_kb: Any
) -> Iterator[CitewallServer]:
    """citewall on the demo KB with a budget of one internal card: the first answer that draws
    on an internal card spends it, so the next one is restricted."""
    server = start_server(
        tmp_path_factory.mktemp("exposure"),
        [demo_kb],
        {"rex": "member", "ada": "admin"},
        {"CITEWALL_GENERATOR": "extractive", "CITEWALL_EXPOSURE_BUDGET_CARDS": "1"},
    )
    try:
        yield server
    finally:
        stop_server(server)


def test_exposure_page_before_anyone_was_exposed_says_so_in_a_sentence(
    page: Page, budget_server: CitewallServer
) -> None:
    """Runs first in this module, on a server nobody has asked anything yet."""
    sign_in(page, budget_server.base_url, budget_server.tokens["ada"], path="/admin/exposure")
    expect(page.get_by_test_id("exposure-empty")).to_have_text(
        "No member has received internal knowledge in this period."
    )
    expect(page.locator("table")).to_have_count(0)
    expect(page.get_by_test_id("exposure-budget")).to_contain_text("Budget: 1 internal card")


def test_admin_sees_the_member_ranked_flagged_and_the_turns(
    page: Page, budget_server: CitewallServer, screenshot: Callable[[Any, str], None]
) -> None:
    server = budget_server
    traps = BrowserTraps().attach(page)

    # -- the member asks through the chat UI ----------------------------------------------------
    sign_in(page, server.base_url, server.tokens["rex"])
    ask(page, INTERNAL_QUESTION)
    ask(page, FOLLOW_UP)
    (conversation,) = api(server, "rex", "GET", "/api/v1/conversations")

    ranking = api(server, "ada", "GET", "/api/v1/admin/analytics/exposure")
    (rex,) = [m for m in ranking["members"] if m["name"] == "rex"]
    assert rex["cards"] >= 1, "the first answer must draw on an internal card"
    assert rex["restricted_turns"] == 1, "the budget of one card restricts the second answer"

    # -- the admin opens Exposure ---------------------------------------------------------------
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, server.base_url, server.tokens["ada"], path="/admin/exposure")
    expect(page.get_by_role("heading", name="Exposure", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="Exposure", exact=True)).to_have_attribute(
        "aria-current", "page"
    )
    expect(page.get_by_test_id("exposure-budget")).to_contain_text(
        "Budget: 1 internal card per member per 7 days"
    )
    row = page.locator("table.exposure-table tbody tr").filter(has_text="rex")
    expect(row).to_have_class(re.compile(r"\bflagged\b"))
    expect(row.locator("td.exposure-cards")).to_have_text(str(rex["cards"]))
    expect(row.get_by_test_id("restricted")).to_contain_text("1 answer restricted since")
    screenshot(page, "admin-exposure")

    # -- the drill-down: the day and both answers, newest first ------------------------------
    row.get_by_role("link", name="rex").click()
    expect(page).to_have_url(re.compile(rf"/admin/exposure/{rex['user_id']}$"))
    expect(page.get_by_role("heading", name="Exposure: rex")).to_be_visible()
    expect(page.get_by_test_id("member-restricted")).to_be_visible()
    detail = api(server, "ada", "GET", f"/api/v1/admin/analytics/exposure/{rex['user_id']}")
    days = page.locator("table.exposure-days tbody tr")
    expect(days).to_have_count(len(detail["days"]))
    # Newest day first, in UTC: the day the latest answer was stored on.
    expect(days.first.locator("td").first).to_have_text(detail["turns"][0]["created_at"][:10])
    turns = page.locator("table.exposure-turns tbody tr")
    expect(turns).to_have_count(2)
    expect(turns.nth(0)).to_contain_text(FOLLOW_UP)
    expect(turns.nth(0)).to_contain_text("restricted: external knowledge only")
    exposed = detail["turns"][1]["cards"]
    assert exposed, "the first answer's internal cards are listed"
    for card in exposed:
        expect(turns.nth(1)).to_contain_text(card["card_id"])
    screenshot(page, "admin-member-exposure")

    # -- each answer links to its conversation in the admin view --------------------------------
    turns.nth(1).get_by_role("link", name=INTERNAL_QUESTION).click()
    expect(page).to_have_url(re.compile(f"/admin/conversations/{conversation['id']}$"))
    expect(page.locator("[data-testid=admin-answer]")).to_have_count(2)
    assert traps.csp_violations == [] and traps.page_errors == []
