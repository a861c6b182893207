"""Audiences in Chromium against a real server on the demo KB with its enterprise cards: an
enterprise member and a basic member ask the same question and get different sources, and
the admin preview answers as a member of a group."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from .conftest import REPO_ROOT, CitewallServer, _run, start_server, stop_server
from .ui import BrowserTraps, ask, sign_in, sse_events

ENTERPRISE_KB = REPO_ROOT / "kb" / "demo" / "enterprise"
QUESTION = "How do I set up SAML single sign-on?"
SSO_CARD = "ent-sso-saml"
SSO_TITLE = "Single sign-on with SAML for Enterprise accounts"


@pytest.fixture(scope="module")
def audience_server(
    tmp_path_factory: pytest.TempPathFactory, demo_kb: Path
) -> Iterator[CitewallServer]:
    """citewall on the demo KB and its enterprise folder (``_audiences.yaml``), with an
    enterprise member, a member in no group and an admin."""
    server = start_server(
        tmp_path_factory.mktemp("audiences"),
        [demo_kb, ENTERPRISE_KB],
        {"erin": "member", "bo": "member", "ada": "admin"},
        {"CITEWALL_GENERATOR": "extractive", "CITEWALL_CALIBRATION": "false"},
    )
    try:
        _run(["users", "groups", "erin", "enterprise"], server.env, "citewall users groups")
        yield server
    finally:
        stop_server(server)


def served(context: BrowserContext, server: CitewallServer, who: str) -> tuple[Page, Any]:
    """``who`` signs in and asks QUESTION; the page and the final event's sources."""
    page = context.new_page()
    traps = BrowserTraps().attach(page)
    sign_in(page, server.base_url, server.tokens[who])
    events = sse_events(ask(page, QUESTION).stream_body)
    assert events[-1][0] == "final", events
    assert traps.page_errors == [] and traps.csp_violations == []
    return page, json.loads(events[-1][1])["sources"]


def test_an_enterprise_member_and_a_basic_member_get_different_sources(
    context: BrowserContext,
    audience_server: CitewallServer,
    screenshot: Callable[[Any, str], None],
) -> None:
    page, sources = served(context, audience_server, "erin")
    assert SSO_CARD in {s["card_id"] for s in sources}, sources
    chips = [t.strip() for t in page.locator(".chip .chip-title").all_inner_texts()]
    assert SSO_TITLE in chips, chips
    screenshot(page, "audiences-enterprise-member")

    page, sources = served(context, audience_server, "bo")
    assert not any(s["card_id"].startswith("ent-") for s in sources), sources
    assert "/enterprise/" not in json.dumps(sources)
    expect(page.locator(".chip .chip-title").filter(has_text="Enterprise")).to_have_count(0)
    expect(page.locator("li.turn-assistant")).not_to_contain_text("identity provider's metadata")
    screenshot(page, "audiences-basic-member")


def test_the_admin_preview_answers_as_a_member_of_a_group(
    page: Page, audience_server: CitewallServer, screenshot: Callable[[Any, str], None]
) -> None:
    traps = BrowserTraps().attach(page)
    sign_in(page, audience_server.base_url, audience_server.tokens["ada"], path="/admin/preview")
    expect(page.get_by_role("heading", name="Answer as a member")).to_be_visible()
    page.get_by_label("Question", exact=True).fill(QUESTION)
    page.get_by_label("Groups", exact=True).fill("enterprise")
    page.get_by_role("button", name="Answer", exact=True).click()
    answer = page.get_by_test_id("preview-answer")
    expect(answer).to_contain_text("As a member of enterprise:", timeout=60_000)
    expect(answer.locator(f"li[data-card-id='{SSO_CARD}']")).to_have_count(1)
    screenshot(page, "audiences-admin-preview")
    # The same question as a member in no group: the enterprise card is not among the sources.
    page.get_by_label("Groups", exact=True).fill("")
    page.get_by_role("button", name="Answer", exact=True).click()
    expect(answer).to_contain_text("As a member in no group:", timeout=60_000)
    expect(answer.locator("li[data-card-id^='ent-']")).to_have_count(0)
    assert traps.page_errors == [] and traps.csp_violations == []
