"""Handoff to a person, in Chromium against a real server on the demo KB with a helpdesk
receiver on loopback: a member asks what the knowledge base does not cover, is offered "Talk
to a person", sends it and sees "Request received"; the signed request reaches the receiver
once, with the conversation; the admin Handoffs page shows it delivered and the Resolution page
counts the conversation as escalated, in its knowledge-gap group too."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from handoff_receiver import Receiver
from playwright.sync_api import BrowserContext, expect

from .conftest import CitewallServer, api, start_server, stop_server
from .ui import BrowserTraps, ask, sign_in, sse_events

#: A question the demo KB has no card for (test_not_found.py asks it too).
UNCOVERED = "where is your office in berlin"
SECRET = "browser-handoff-secret-0123456789"
NOTE = "Please call me back about the office."
DELIVERY_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    helpdesk = Receiver(secret=SECRET).start()
    try:
        yield helpdesk
    finally:
        helpdesk.stop()


@pytest.fixture(scope="module")
def handoff_server(
    tmp_path_factory: pytest.TempPathFactory, demo_kb: Path, receiver: Receiver
) -> Iterator[CitewallServer]:
    """citewall on the demo KB (extractive answers) that hands off to ``receiver``."""
    server = start_server(
        tmp_path_factory.mktemp("handoff"),
        [demo_kb],
        {"mia": "member", "ada": "admin"},
        {
            "CITEWALL_GENERATOR": "extractive",
            "CITEWALL_CALIBRATION": "false",
            "CITEWALL_HANDOFF_WEBHOOK_URL": receiver.url,
            "CITEWALL_HANDOFF_WEBHOOK_SECRET": SECRET,
            "CITEWALL_HANDOFF_POLL_S": "0.5",
        },
    )
    try:
        yield server
    finally:
        stop_server(server)


def wait_for_delivery(receiver: Receiver, server: CitewallServer) -> list[str]:
    deadline = time.monotonic() + DELIVERY_TIMEOUT_S
    while time.monotonic() < deadline:
        if receiver.accepted():
            return receiver.accepted()
        time.sleep(0.2)
    pytest.fail(f"no handoff reached the receiver:\n{server.log_tail()}")


def test_a_member_hands_off_and_the_admin_pages_show_it(
    context: BrowserContext,
    handoff_server: CitewallServer,
    receiver: Receiver,
    screenshot: Callable[[Any, str], None],
) -> None:
    server = handoff_server
    page = context.new_page()
    traps = BrowserTraps().attach(page)
    sign_in(page, server.base_url, server.tokens["mia"])

    # -- "not found": the handoff is offered on its own, with a line saying why -----------------
    turn = ask(page, UNCOVERED)
    final = json.loads(sse_events(turn.stream_body)[-1][1])
    assert final["answer_status"] == "not_found", final
    conversation = final["conversation_id"]
    offer = page.locator(".handoff-offered")
    expect(offer).to_contain_text("A person from the team can pick this up.")
    offer.get_by_role("button", name="Talk to a person").click()
    form = page.get_by_role("form", name="Talk to a person")
    form.get_by_label("Anything to add for them? (optional)").fill(NOTE)
    form.get_by_role("button", name="Send request").click()
    expect(page.get_by_role("status").filter(has_text="Request received")).to_be_visible()
    screenshot(page, "member-handoff-received")

    # -- the helpdesk gets it once, signed, with the conversation and the member's note ---------
    (handoff_id,) = wait_for_delivery(receiver, server)
    (delivered,) = [r for r in receiver.received if r.verified]
    assert delivered.body["handoff_id"] == handoff_id
    assert delivered.body["conversation_id"] == conversation
    assert delivered.body["message"] == NOTE
    assert delivered.body["member"]["name"] == "mia"
    assert [(t["question"], t["status"]) for t in delivered.body["turns"]] == [
        (UNCOVERED, "not_found")
    ]

    # -- the admin Handoffs page: delivered, with the note and a link to the conversation ------
    admin = context.new_page()
    admin_traps = BrowserTraps().attach(admin)
    sign_in(admin, server.base_url, server.tokens["ada"], path="/admin/handoffs")
    expect(admin.get_by_role("heading", name="Handoffs")).to_be_visible()
    row = admin.locator(f'table.handoffs-table tr[data-handoff="{handoff_id}"]')
    for _ in range(20):  # the delivery is recorded just after the receiver answers
        if "delivered" in row.get_by_test_id("handoff-status").inner_text():
            break
        admin.reload()
        time.sleep(0.5)
    expect(row.get_by_test_id("handoff-status")).to_contain_text("delivered")
    expect(row).to_contain_text(NOTE)
    expect(admin.get_by_test_id("handoff-counts")).to_have_text("0 pending, 0 failed, 1 delivered")
    expect(row.get_by_role("link", name="Open")).to_have_attribute(
        "href", f"/admin/conversations/{conversation}"
    )
    screenshot(admin, "admin-handoffs")

    # -- the Resolution page: the conversation is escalated, in the totals and its gap group ---
    admin.get_by_role("link", name="Resolution").click()
    expect(admin).to_have_url(re.compile(r"/admin/resolution$"))
    expect(admin.get_by_test_id("resolution-totals")).to_contain_text(
        "1 decided conversations: 0.0% resolved, 100.0% escalated"
    )
    path = "/api/v1/admin/analytics/resolution"
    gaps = api(server, "ada", "GET", f"{path}/gaps")
    behind_groups = {
        g["group_id"]: api(server, "ada", "GET", f"{path}/conversations?gap_group={g['group_id']}")
        for g in gaps
    }
    group = next(
        g
        for g in gaps
        if conversation in {c["conversation_id"] for c in behind_groups[g["group_id"]]}
    )
    assert group["counts"]["escalated"] == 1 and group["escalation_rate"] == 1.0, group
    gap_row = admin.locator(f'table.resolution-gaps tr[data-group="{group["group_id"]}"]')
    expect(gap_row).to_contain_text(group["question"])
    expect(gap_row).to_contain_text("100.0%")
    # The outcome shown by default is "escalated": the conversation behind the number.
    behind = admin.locator("table.outcome-conversations tbody tr")
    expect(behind).to_have_count(1)
    expect(behind.get_by_role("link")).to_have_attribute(
        "href", f"/admin/conversations/{conversation}"
    )
    # The group's count lists its conversations (filtered, as a card's count does).
    gap_row.get_by_role("button").click()
    expect(admin.get_by_test_id("resolution-gap-filter")).to_contain_text(group["question"])
    expect(behind).to_have_count(1)
    expect(behind.get_by_role("link")).to_have_attribute(
        "href", f"/admin/conversations/{conversation}"
    )
    screenshot(admin, "admin-resolution")
    for traps_ in (traps, admin_traps):
        assert traps_.page_errors == [] and traps_.csp_violations == []
    assert len(receiver.received) == 1
