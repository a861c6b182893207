"""KB management from the admin pages, end to end in Chromium against a real `citewall serve`:
an admin writes a playbook with a "Tell the member" part on the Playbooks page, edits it (a
second version), then disables a card on its page. After each change a member asks through
the chat and the answer reflects it: the playbook's member-facing text woven into the prose
(never as a source, never its staff notes), the edited text after the edit, and nothing from
the disabled card after the disable. A step that asks for confirmation is confirmed."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Locator, Page, expect

from .conftest import CitewallServer, start_server, stop_server
from .ui import ask, sign_in, sse_events

PLAYBOOK_ID = "pb-parcel-held-at-depot"
PLAYBOOK_TITLE = "Parcels held at the depot after three delivery attempts"
STAFF_NOTES = (
    "Look the parcel up in Helm under queue DEP-7 and note the depot code. Over 3 attempts, "
    "the depot lead books the redelivery."
)
TELL_V1 = (
    "A parcel held at the depot after three delivery attempts stays there for 7 days, and you "
    "can collect it with your ID and the tracking number."
)
TELL_V2 = (
    "A parcel held at the depot after three delivery attempts stays there for 12 days, and you "
    "can collect it with your ID and the tracking number."
)
PLAYBOOK_QUESTION = "How long is a parcel held at the depot after three delivery attempts?"
#: An external card of the small KB, a question it answers, and text only it holds.
DISABLED_CARD = "ship-void-label"
DISABLED_QUESTION = "How do I void an unused label?"
DISABLED_TEXT = "voided within 30 days"
#: A confirm button's words, where a page asks with a button of its own ("Confirm and apply").
CONFIRM = re.compile(r"^(confirm|yes)\b", re.IGNORECASE)
CHANGE_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def kb_server(
    tmp_path_factory: pytest.TempPathFactory, kb_fixture_dir: Path
) -> Iterator[CitewallServer]:
    server = start_server(
        tmp_path_factory.mktemp("kb-management"),
        [kb_fixture_dir / "small.jsonl"],
        {"mia": "member", "ada": "admin"},
        {
            "CITEWALL_GENERATOR": "extractive",
            "CITEWALL_CALIBRATION": "false",
            "CITEWALL_SYNC_SCHEDULER": "off",
        },
    )
    try:
        yield server
    finally:
        stop_server(server)


@dataclass(frozen=True)
class MemberAnswer:
    """What a member was told: the answer's text as the chat shows it and the final event."""

    shown: str
    text: str
    source_ids: frozenset[str]
    sources_json: str


def member_asks(context: BrowserContext, server: CitewallServer, question: str) -> MemberAnswer:
    """A member asks ``question`` in a new conversation of the chat."""
    page = context.new_page()
    try:
        sign_in(page, server.base_url, server.tokens["mia"])
        answered = ask(page, question)
        name, data = sse_events(answered.stream_body)[-1]
        assert name == "final", name
        final = json.loads(data)
        return MemberAnswer(
            answered.answer_text,
            str(final["answer"]),
            frozenset(str(s["card_id"]) for s in final["sources"]),
            json.dumps(final["sources"]),
        )
    finally:
        page.close()


def confirm_if_asked(page: Page) -> bool:
    """Confirm a change the page asks about: a question in the page (a group holding Cancel
    beside the button that does it) or a button "Confirm…" / "Yes…". Whether one was there."""
    cancel = page.get_by_role("button", name="Cancel", exact=True)
    question = page.get_by_role("group").filter(has=cancel)
    if question.count() == 1 and question.is_visible():
        question.get_by_role("button").filter(has_not_text="Cancel").first.click()
        return True
    named = page.get_by_role("button", name=CONFIRM)
    if named.count() == 1 and named.is_visible() and named.is_enabled():
        named.click()
        return True
    return False


def confirmed(page: Page, done: Locator, timeout_s: float = CHANGE_TIMEOUT_S) -> None:
    """Wait (bounded) for ``done`` to show, confirming the change if the page asks first; a
    browser dialog (``confirm()``) is accepted by the context's handler."""
    deadline = time.monotonic() + timeout_s
    while not done.is_visible():
        if time.monotonic() > deadline:
            raise AssertionError(f"the change did not finish within {timeout_s} s")
        if not confirm_if_asked(page):
            page.wait_for_timeout(100)


def assert_tells_in_prose(answer: MemberAnswer, tell: str) -> None:
    """The playbook's member-facing text is in the answer, its staff notes and the playbook
    itself are not shown (internal: never a source)."""
    assert tell in answer.text, answer.text
    assert tell in answer.shown, answer.shown
    assert "Helm" not in answer.text and "DEP-7" not in answer.text, answer.text
    assert PLAYBOOK_ID not in answer.source_ids and PLAYBOOK_ID not in answer.sources_json
    assert PLAYBOOK_TITLE not in answer.sources_json, answer.sources_json


def test_a_playbook_written_and_edited_and_a_card_disabled_in_the_admin_pages_reach_members(
    context: BrowserContext, kb_server: CitewallServer, screenshot: Callable[[Any, str], None]
) -> None:
    server = kb_server
    context.on("dialog", lambda dialog: dialog.accept())  # a native confirm() is confirmed
    before = member_asks(context, server, PLAYBOOK_QUESTION)
    assert "depot" not in before.text, before.text

    admin = context.new_page()
    sign_in(admin, server.base_url, server.tokens["ada"], "/admin/playbooks")
    expect(admin.get_by_role("heading", name="Playbooks", exact=True)).to_be_visible()
    admin.get_by_role("link", name="New playbook").click()
    form = admin.get_by_test_id("playbook-form")
    form.get_by_label("Id").fill(PLAYBOOK_ID)
    form.get_by_label("Title").fill(PLAYBOOK_TITLE)
    form.get_by_label("Staff notes (Markdown)").fill(STAFF_NOTES)
    form.get_by_label("Tell the member (plain prose, optional)").fill(TELL_V1)
    expect(admin.get_by_test_id("playbook-preview")).to_contain_text(TELL_V1)
    form.get_by_role("button", name="Save").click()
    confirmed(admin, admin.get_by_test_id("playbook-state").filter(has_text="Version 1,"))
    expect(admin).to_have_url(re.compile(f"/admin/playbooks/{PLAYBOOK_ID}$"))
    screenshot(admin, "kb-management-playbook-v1")
    assert_tells_in_prose(member_asks(context, server, PLAYBOOK_QUESTION), TELL_V1)

    form = admin.get_by_test_id("playbook-form")
    form.get_by_label("Tell the member (plain prose, optional)").fill(TELL_V2)
    form.get_by_role("button", name="Save").click()
    confirmed(admin, admin.get_by_test_id("playbook-state").filter(has_text="Version 2,"))
    expect(admin.locator(".playbook-history")).to_contain_text("Roll back to version 1")
    edited = member_asks(context, server, PLAYBOOK_QUESTION)
    assert_tells_in_prose(edited, TELL_V2)
    assert TELL_V1 not in edited.text, edited.text

    served = member_asks(context, server, DISABLED_QUESTION)
    assert DISABLED_CARD in served.source_ids and DISABLED_TEXT in served.text, served.text
    admin.goto(f"{server.base_url}/admin/cards/{DISABLED_CARD}")
    control = admin.get_by_test_id("serve-control")
    control.get_by_role("button", name="Disable").click()
    confirmed(admin, control.locator(".badge-disabled"))
    expect(control.get_by_role("button", name="Enable")).to_be_visible()
    screenshot(admin, "kb-management-card-disabled")
    gone = member_asks(context, server, DISABLED_QUESTION)
    assert DISABLED_CARD not in gone.source_ids, gone.sources_json
    assert DISABLED_TEXT not in gone.text and "Void label" not in gone.text, gone.text
