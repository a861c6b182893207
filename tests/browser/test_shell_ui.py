"""The app shell in Chromium against a real `citewall serve` (demo KB, extractive generator):
the conversation list (paging, links, rename, delete, search), keyboard access (skip links,
focus after sign-in, a focus ring with enough contrast), sign-out, the conversation drawer on a
phone and the tab title.

Each test signs in as its own member, whose history it seeds through the storage layer (the
same ``save_turn`` the chat uses), so the lists do not depend on test order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from builders import saved_turn
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect

from citewall.config import load_settings
from citewall.storage import db, users
from citewall.storage.models import new_uuid
from citewall.storage.turns import NewConversation

from .conftest import CitewallServer, api, start_server, stop_server
from .ui import BrowserTraps, ask, contrast, focus_ring, install_recorders, rgb, sign_in

PHONE = {"width": 390, "height": 844}
MEMBERS = ("pat", "mia", "kim", "noor", "lee", "ray", "tia", "sam", "demo-member")


@pytest.fixture(scope="module")
def shell_server(
    tmp_path_factory: pytest.TempPathFactory, demo_kb: Path
) -> Iterator[CitewallServer]:
    """citewall on the demo KB with the extractive generator and no reranker (the shell needs
    answers, not their ranking); a member per test and the admin ada."""
    server = start_server(
        tmp_path_factory.mktemp("shell"),
        [demo_kb],
        {**dict.fromkeys(MEMBERS, "member"), "ada": "admin"},
        {"CITEWALL_GENERATOR": "extractive", "CITEWALL_RERANKER_ENABLED": "false"},
    )
    try:
        yield server
    finally:
        stop_server(server)


def seed_conversations(server: CitewallServer, user: str, titles: list[str]) -> list[str]:
    """Store one short turn per title for ``user``, a minute apart (the last title newest);
    return the conversation ids newest first, the order the list shows them in."""
    settings = load_settings(data_dir=Path(server.env["CITEWALL_DATA_DIR"]), database_url=None)
    engine = db.make_engine(settings.sqlalchemy_url)
    start = datetime.now(UTC) - timedelta(days=2)
    ids = []
    try:
        with db.make_session_factory(engine)() as session:
            user_id = users.get_user(session, user).id
            for i, title in enumerate(titles):
                conversation_id = new_uuid()
                saved_turn(
                    session,
                    conversation_id=conversation_id,
                    question=title,
                    answer_content=f"A stored answer about {title.lower()}.",
                    sources=[],
                    hybrid_path=None,
                    timings={},
                    generator="extractive",
                    dropped_markers=0,
                    events=[],
                    new_conversation=NewConversation(user_id=user_id, title=title),
                    now=start + timedelta(minutes=i),
                )
                ids.append(conversation_id)
    finally:
        engine.dispose()
    return ids[::-1]


def heading(page: Page) -> Any:
    return page.get_by_role("heading", level=1)


def path_of(page: Page) -> str:
    return urlsplit(page.url).path


# -- defect 3: the list stopped at 50 ---------------------------------------------------------


def test_conversation_list_pages_past_the_first_fifty(
    context: BrowserContext, shell_server: CitewallServer
) -> None:
    """Defect 3: the list showed the newest 50 conversations and no way to the older ones.
    "Show older" loads the next page while a page comes back full, and goes once one does not."""
    titles = [f"Archived question {n:02d}" for n in range(1, 56)]
    ids = seed_conversations(shell_server, "pat", titles)
    page = context.new_page()
    traps = BrowserTraps().attach(page)
    sign_in(page, shell_server.base_url, shell_server.tokens["pat"])

    items = page.locator(".conversation-list .conversation-item")
    expect(items).to_have_count(50)
    older = page.get_by_role("button", name="Show older")
    expect(older).to_be_visible()
    older.click()
    expect(items).to_have_count(55)
    expect(older).to_have_count(0)
    shown = page.locator(".conversation-list .conversation-title").all_inner_texts()
    assert shown == titles[::-1]
    # Focus moved to the first of the older conversations (the button it was on is gone).
    expect(items.nth(50)).to_be_focused()

    # The oldest one opens like any other.
    items.last.click()
    expect(page).to_have_url(re.compile(re.escape(f"/c/{ids[-1]}") + "$"))
    expect(heading(page)).to_have_text("Archived question 01")
    assert traps.page_errors == [] and traps.csp_violations == []


# -- list items are links ---------------------------------------------------------------------


def test_list_items_are_links_that_open_in_a_new_tab(
    context: BrowserContext, shell_server: CitewallServer
) -> None:
    """Each conversation in the list is an `<a href="/c/<id>">`: a plain click opens it in the
    app (no page load), a Ctrl-click opens it in a new tab (which, once signed in, shows it) and
    leaves this one where it was."""
    ids = seed_conversations(shell_server, "mia", ["Printing a label", "Refund timing"])
    page = context.new_page()
    sign_in(page, shell_server.base_url, shell_server.tokens["mia"])
    refund = page.get_by_role("link", name=re.compile("^Refund timing"))
    label = page.get_by_role("link", name=re.compile("^Printing a label"))
    expect(refund).to_have_attribute("href", f"/c/{ids[0]}")
    expect(label).to_have_attribute("href", f"/c/{ids[1]}")

    page.evaluate("window.__samePage = true")
    refund.click()
    expect(page).to_have_url(re.compile(re.escape(f"/c/{ids[0]}") + "$"))
    expect(heading(page)).to_have_text("Refund timing")
    expect(refund).to_have_attribute("aria-current", "page")
    assert page.evaluate("window.__samePage") is True, "a plain click reloaded the page"

    with context.expect_page() as opened:
        label.click(modifiers=["Control"])
    tab = opened.value
    tab.wait_for_load_state()
    assert path_of(tab) == f"/c/{ids[1]}"
    assert path_of(page) == f"/c/{ids[0]}"
    expect(heading(page)).to_have_text("Refund timing")
    # The session lives in its tab (sessionStorage): the new tab asks for the token, then opens
    # the conversation it was given.
    tab.get_by_label("Access token").fill(shell_server.tokens["mia"])
    tab.get_by_role("button", name="Sign in").click()
    expect(heading(tab)).to_have_text("Printing a label")
    assert path_of(tab) == f"/c/{ids[1]}"
    tab.close()


# -- rename, delete, search ------------------------------------------------------------------


def row(page: Page, title: str) -> Any:
    """The list item whose link or title field shows ``title``."""
    return page.locator("li.conversation").filter(
        has=page.locator(".conversation-title", has_text=title)
    )


def titles_listed(page: Page) -> Locator:
    return page.locator(".conversation-list .conversation-title")


def test_rename_delete_and_search_conversations(
    context: BrowserContext, shell_server: CitewallServer, screenshot: Callable[[Any, str], None]
) -> None:
    """Rename in place (Enter or Save; Escape cancels; the open conversation's heading and tab
    follow), search on titles and questions, delete after a confirmation (the open one leaves
    for a new conversation). The server agrees after each step; admins still see the deleted."""
    # Newest first, as listed: the last title seeded is the newest.
    label, refund, customs = ids = seed_conversations(
        shell_server,
        "sam",
        ["Customs forms for Canada", "Refund for a damaged parcel", "Label printing fails"],
    )
    page = context.new_page()
    traps = BrowserTraps().attach(page)
    sign_in(page, shell_server.base_url, shell_server.tokens["sam"], path=f"/c/{refund}")
    expect(heading(page)).to_have_text("Refund for a damaged parcel")
    # The list loads on its own request, after the heading: wait for it, as a reader would.
    expect(titles_listed(page)).to_have_text(
        ["Label printing fails", "Refund for a damaged parcel", "Customs forms for Canada"]
    )

    def server_titles() -> dict[str, str]:
        listed = api(shell_server, "sam", "GET", "/api/v1/conversations")
        return {c["id"]: c["title"] for c in listed}

    # -- rename another conversation with Enter; focus comes back to its link -----------------
    page.get_by_role("button", name="Actions for Label printing fails").click()
    page.get_by_role("button", name="Rename").click()
    field = page.get_by_role("textbox", name="Title")
    expect(field).to_be_focused()
    expect(field).to_have_value("Label printing fails")
    field.fill("Printer trouble")
    screenshot(page, "shell-rename")
    field.press("Enter")
    renamed = page.get_by_role("link", name=re.compile("^Printer trouble"))
    expect(renamed).to_be_focused()
    assert server_titles()[label] == "Printer trouble"
    expect(heading(page)).to_have_text("Refund for a damaged parcel")

    # -- Escape cancels ----------------------------------------------------------------------
    page.get_by_role("button", name="Actions for Printer trouble").click()
    page.get_by_role("button", name="Rename").click()
    field.fill("Not this")
    field.press("Escape")
    expect(renamed).to_be_focused()
    assert server_titles()[label] == "Printer trouble"

    # -- rename the open conversation with Save: its heading and the tab follow ---------------
    page.get_by_role("button", name="Actions for Refund for a damaged parcel").click()
    page.get_by_role("button", name="Rename").click()
    field.fill("  Damaged parcel refund ")
    page.get_by_role("button", name="Save").click()
    expect(heading(page)).to_have_text("Damaged parcel refund")
    expect(page).to_have_title("Damaged parcel refund - citewall")
    assert server_titles()[refund] == "Damaged parcel refund"

    # -- search: on titles, and on the member's questions (the old title was the question) ----
    search = page.get_by_role("searchbox", name="Search conversations")
    search.fill("customs")
    expect(titles_listed(page)).to_have_text(["Customs forms for Canada"])
    expect(page.get_by_role("status").filter(has_text="match")).to_have_text(
        "1 conversation matches."
    )
    search.fill("label printing")
    expect(titles_listed(page)).to_have_text(["Printer trouble"])
    search.fill("no such words anywhere")
    expect(page.get_by_text("No conversations match your search.")).to_be_visible()
    search.fill("")
    expect(titles_listed(page)).to_have_count(3)

    # -- delete asks first; Cancel keeps it ---------------------------------------------------
    toggle = page.get_by_role("button", name="Actions for Customs forms for Canada")
    toggle.click()
    row(page, "Customs forms for Canada").get_by_role("button", name="Delete").click()
    confirm = page.get_by_role("group", name=re.compile("^Delete “Customs forms for Canada”"))
    expect(confirm).to_be_visible()
    expect(confirm.get_by_role("button", name="Cancel")).to_be_focused()
    screenshot(page, "shell-delete-confirm")
    confirm.get_by_role("button", name="Cancel").click()
    expect(confirm).to_have_count(0)
    expect(toggle).to_be_focused()
    assert customs in server_titles()

    # -- delete another conversation: gone from the list and from the server -----------------
    toggle.click()
    row(page, "Customs forms for Canada").get_by_role("button", name="Delete").click()
    confirm.get_by_role("button", name="Delete").click()
    expect(titles_listed(page)).to_have_text(["Printer trouble", "Damaged parcel refund"])
    assert customs not in server_titles()
    gone = httpx.get(
        f"{shell_server.base_url}/api/v1/conversations/{customs}",
        headers={"Authorization": f"Bearer {shell_server.tokens['sam']}"},
        timeout=30,
    )
    assert gone.status_code == 404, gone.text
    expect(heading(page)).to_have_text("Damaged parcel refund")

    # -- delete the open one: a new conversation, ready to type in ----------------------------
    entries = page.evaluate("history.length")
    page.get_by_role("button", name="Actions for Damaged parcel refund").click()
    row(page, "Damaged parcel refund").get_by_role("button", name="Delete").click()
    page.get_by_role("group", name=re.compile("^Delete “Damaged parcel refund”")).get_by_role(
        "button", name="Delete"
    ).click()
    expect(page).to_have_url(re.compile(r"/$"))
    # The deleted conversation's URL is replaced, not kept in the history for Back.
    assert page.evaluate("history.length") == entries
    expect(heading(page)).to_have_text("New conversation")
    expect(page.get_by_label("Your question")).to_be_focused()
    expect(titles_listed(page)).to_have_text(["Printer trouble"])

    # A reload shows what the server kept; the admin still sees both deleted conversations.
    page.reload()
    expect(titles_listed(page)).to_have_text(["Printer trouble"])
    admin_rows = api(shell_server, "ada", "GET", "/api/v1/admin/conversations?limit=200")
    hidden = {c["id"] for c in admin_rows if c.get("hidden_at")}
    assert {customs, refund} <= hidden and label not in hidden, admin_rows
    assert set(ids) <= {c["id"] for c in admin_rows}
    assert traps.page_errors == [] and traps.dialogs == []


def test_a_deterministic_generator_offers_no_regenerate(
    browser: Browser, shell_server: CitewallServer
) -> None:
    """The extractive generator answers a question the same way every time, so Regenerate
    (which would return the identical answer) is not offered; rating and Copy stay, the rating
    first, on the row's first line (an admin style once pushed it 2rem down)."""
    ctx = browser.new_context()
    install_recorders(ctx)
    try:
        page = ctx.new_page()
        sign_in(page, shell_server.base_url, shell_server.tokens["kim"])
        assert api(shell_server, "kim", "GET", "/api/v1/me")["regenerate_varies"] is False
        ask(page, "How do I void an unused label?")
        answer = page.locator("li.turn-assistant").last
        expect(answer.get_by_role("button", name="Copy answer")).to_be_visible()
        expect(answer.get_by_role("button", name="Regenerate answer")).to_have_count(0)
        helpful = answer.get_by_role("button", name="Helpful", exact=True).bounding_box()
        copy = answer.get_by_role("button", name="Copy answer").bounding_box()
        row = answer.locator(".answer-actions").bounding_box()
        assert helpful and copy and row
        assert helpful["x"] < copy["x"], (helpful, copy)
        assert abs(helpful["y"] - copy["y"]) < 4 and helpful["y"] - row["y"] < 8, (helpful, row)
    finally:
        ctx.close()


# -- defect 4: keyboard -----------------------------------------------------------------------


def test_skip_links_and_focus_after_sign_in(
    context: BrowserContext, shell_server: CitewallServer
) -> None:
    """Defect 4: it took 54 Tabs from the top to the question box and sign-in left focus on the
    body. Sign-in now lands on the question box (the main region on an admin page); the first
    Tab reaches "Skip to question" (on admin pages "Skip to main content")."""
    [conversation] = seed_conversations(shell_server, "kim", ["Keyboard question"])
    page = context.new_page()
    sign_in(page, shell_server.base_url, shell_server.tokens["kim"])
    box = page.get_by_label("Your question")
    expect(box).to_be_focused()

    page.goto(f"{shell_server.base_url}/c/{conversation}")
    expect(heading(page)).to_have_text("Keyboard question")
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to question")
    expect(skip).to_be_focused()
    shown = skip.bounding_box()
    assert shown is not None and shown["y"] >= 0 and shown["height"] >= 16, shown
    page.keyboard.press("Enter")
    expect(box).to_be_focused()
    assert path_of(page) == f"/c/{conversation}" and not urlsplit(page.url).fragment

    admin = context.new_page()
    sign_in(admin, shell_server.base_url, shell_server.tokens["ada"], path="/admin/events")
    expect(admin.get_by_role("heading", name="Retrieval events")).to_be_visible()
    assert admin.evaluate("document.activeElement.id") == "main"
    admin.reload()
    expect(admin.get_by_role("heading", name="Retrieval events")).to_be_visible()
    admin.keyboard.press("Tab")
    expect(admin.get_by_role("link", name="Skip to main content")).to_be_focused()
    admin.keyboard.press("Enter")
    assert admin.evaluate("document.activeElement.id") == "main"
    admin.keyboard.press("Tab")
    assert admin.evaluate("document.activeElement.closest('main') !== null")
    assert admin.evaluate("document.activeElement.closest('header') === null")


def test_contrast_helper() -> None:
    assert round(contrast((0, 0, 0), (255, 255, 255)), 1) == 21.0
    assert round(contrast((0x8F, 0xB3, 0xEF), (255, 255, 255)), 1) == 2.1  # the old ring


def assert_focus_rings(page: Page, stops: int) -> list[str]:
    """Tab through ``stops`` elements; each shows an outline of >= 2 px whose colour has >= 3:1
    contrast against white and against the surface it is drawn on."""
    white = (255.0, 255.0, 255.0)
    seen = []
    for _ in range(stops):
        page.keyboard.press("Tab")
        ring = focus_ring(page)
        seen.append(ring["what"])
        assert ring["focusVisible"], ring
        assert ring["style"] not in ("none", "hidden") and ring["width"] >= 2, ring
        color = rgb(ring["color"])
        assert contrast(color, white) >= 3, ring
        assert contrast(color, rgb(ring["surface"])) >= 3, ring
    return seen


def test_focus_ring_has_three_to_one_contrast(
    context: BrowserContext, shell_server: CitewallServer
) -> None:
    """Defect 4: the focus ring was a light blue shadow (#8fb3ef, ~2.1:1 against white). Every
    keyboard stop on the chat and on an admin page now shows an outline of at least 3:1 against
    white and against the surface around it."""
    seed_conversations(shell_server, "kim", ["Focus ring question", "Another focus question"])
    page = context.new_page()
    sign_in(page, shell_server.base_url, shell_server.tokens["kim"])
    page.goto(shell_server.base_url + "/")
    expect(page.locator(".conversation-list .conversation-item").first).to_be_visible()
    seen = assert_focus_rings(page, 10)
    assert any("Focus ring question" in s for s in seen), seen

    admin = context.new_page()
    sign_in(admin, shell_server.base_url, shell_server.tokens["ada"], path="/admin/cards")
    expect(admin.get_by_role("heading", name="Knowledge base cards")).to_be_visible()
    admin.reload()
    expect(admin.get_by_role("heading", name="Knowledge base cards")).to_be_visible()
    assert_focus_rings(admin, 12)


# -- defect 5: sign-out -----------------------------------------------------------------------


def test_sign_out_leaves_a_fresh_chat_for_the_next_person(
    context: BrowserContext, shell_server: CitewallServer
) -> None:
    """Defect 5 (first half): sign-out kept `/c/<id>` in the address bar, so the next person to
    sign in landed on someone else's conversation ("not found"). Sign-out goes to `/`, and the
    next sign-in opens a new conversation."""
    [conversation] = seed_conversations(shell_server, "noor", ["Noor's own question"])
    page = context.new_page()
    traps = BrowserTraps().attach(page)
    sign_in(page, shell_server.base_url, shell_server.tokens["noor"], path=f"/c/{conversation}")
    expect(heading(page)).to_have_text("Noor's own question")
    traps.failed_requests.clear()  # the first /me, before the token, is a 401 by design

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Access token")).to_be_visible()
    assert path_of(page) == "/"
    expect(page.get_by_label("Access token")).to_be_focused()
    # An API token is not a session: sign-out forgets it and sends nothing that fails.
    page.wait_for_timeout(300)
    assert traps.failed_requests == []

    page.get_by_label("Access token").fill(shell_server.tokens["lee"])
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    assert path_of(page) == "/"
    expect(heading(page)).to_have_text("New conversation")
    expect(page.locator("li.turn")).to_have_count(0)
    expect(page.get_by_role("alert")).to_have_count(0)
    expect(page.get_by_label("Your question")).to_be_enabled()
    expect(page.get_by_text("Noor's own question")).to_have_count(0)
    assert traps.page_errors == []


# -- defect 7: phone --------------------------------------------------------------------------

#: Where each visible child of the header sits, and whether the header overflows sideways.
HEADER_ROWS = """() => {
  const header = document.querySelector("header");
  const kids = [...header.children]
    .map((e) => e.getBoundingClientRect())
    .filter((r) => r.width > 0 && r.height > 0);
  return {
    tops: kids.map((r) => r.top),
    bottoms: kids.map((r) => r.bottom),
    height: header.getBoundingClientRect().height,
    overflow: header.scrollWidth - header.clientWidth,
    pageWidth: document.documentElement.scrollWidth,
  };
}"""


def assert_header_is_one_row(page: Page) -> None:
    rows = page.evaluate(HEADER_ROWS)
    # One row: every item overlaps every other vertically.
    assert max(rows["tops"]) < min(rows["bottoms"]), rows
    assert rows["height"] < 64, rows
    assert rows["overflow"] <= 1 and rows["pageWidth"] <= PHONE["width"], rows


#: Each header link's box, and whether the point at its centre is the link (not covered).
NAV_LINKS = """() => [...document.querySelectorAll("header nav a")].map((a) => {
  const r = a.getBoundingClientRect();
  const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
  return {
    text: a.textContent, x: r.x, y: r.y, right: r.right, bottom: r.bottom,
    width: r.width, covered: !(hit && a.contains(hit)),
    clipped: a.closest("nav").scrollWidth > a.closest("nav").clientWidth,
  };
})"""


#: The admin navigation: Chat and the twelve admin pages (conversations, cards, playbooks,
#: sources, analytics, retrieval events, knowledge gaps, resolution, handoffs, exposure, audit
#: log, answer as a member).
ADMIN_LINKS = 13


def assert_nav_links_visible(page: Page, expected: int) -> None:
    """Every navigation link lies whole inside the phone's viewport, uncovered and unclipped."""
    links = page.evaluate(NAV_LINKS)
    assert len(links) == expected, links
    for link in links:
        assert link["width"] > 0 and link["x"] >= 0 and link["y"] >= 0, link
        assert link["right"] <= PHONE["width"] and link["bottom"] <= PHONE["height"], link
        assert not link["covered"] and not link["clipped"], link
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_phone_header_shows_every_link_whole(
    browser: Browser, shell_server: CitewallServer
) -> None:
    """At 390 px the header clipped "Chat" and scrolled the admin navigation out of sight. Every
    link is whole and visible: a member's header stays one row, an admin's navigation wraps on
    a row of its own."""
    ctx = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = ctx.new_page()
        sign_in(page, shell_server.base_url, shell_server.tokens["kim"])
        expect(heading(page)).to_have_text("New conversation")
        assert_nav_links_visible(page, 1)
        assert_header_is_one_row(page)
        # A longer name gives way too: Sign out stays on the row (it wrapped under it).
        longer = ctx.new_page()
        sign_in(longer, shell_server.base_url, shell_server.tokens["demo-member"])
        expect(heading(longer)).to_have_text("New conversation")
        assert_header_is_one_row(longer)
        longer.close()
        for path, title in (("/admin/events", "Retrieval events"), ("/", "New conversation")):
            admin = ctx.new_page()
            sign_in(admin, shell_server.base_url, shell_server.tokens["ada"], path=path)
            expect(admin.get_by_role("heading", level=1)).to_have_text(title)
            assert_nav_links_visible(admin, ADMIN_LINKS)
            admin.close()
    finally:
        ctx.close()


#: The pages the admin navigation links to (read from the header, so a new page is covered).
ADMIN_PAGES = """() => [...document.querySelectorAll("header nav a")]
  .map((a) => new URL(a.href).pathname)
  .filter((p) => p.startsWith("/admin/"))"""

#: Table cells whose words are cut across lines: a word (split at spaces, hyphens and
#: slashes, where a line may break) laid out in more than one box.
BROKEN_WORDS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll("main td, main th")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.data.matchAll(/[^\\s\\-\\/]+/g)) {
        if (m[0].length < 4) continue;
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (tops.size > 1) broken.push(m[0]);
      }
    }
  }
  return broken;
}"""


def seed_gap_question(server: CitewallServer, user: str) -> None:
    """A question the knowledge base did not answer, so the Knowledge gaps and Resolution
    tables have a row whose words could be cut."""
    settings = load_settings(data_dir=Path(server.env["CITEWALL_DATA_DIR"]), database_url=None)
    engine = db.make_engine(settings.sqlalchemy_url)
    try:
        with db.make_session_factory(engine)() as session:
            question = "What is the Beacon escalation procedure for ENT-P1 outages overnight?"
            saved_turn(
                session,
                conversation_id=new_uuid(),
                question=question,
                answer_content="I could not find this in the knowledge base.",
                answer_status="not_found",
                new_conversation=NewConversation(
                    user_id=users.get_user(session, user).id, title=question
                ),
                now=datetime.now(UTC) - timedelta(days=3),
            )
    finally:
        engine.dispose()


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 800}, PHONE], ids=str)
def test_admin_pages_fit_the_viewport(
    browser: Browser, shell_server: CitewallServer, viewport: dict[str, int]
) -> None:
    """At 1280x800 every admin page was 5-14 px wider than the window (the navigation, one
    row that never wrapped, clipped "Answer as a member"); on a phone the Audit log page was
    432 px wide and the gaps tables cut words ("escalatio n"). No admin page scrolls
    sideways at either size, every link is whole, and no table cell cuts a word."""
    seed_gap_question(shell_server, "sam")
    ctx = browser.new_context(viewport=viewport)
    try:
        page = ctx.new_page()
        sign_in(page, shell_server.base_url, shell_server.tokens["ada"], path="/admin/events")
        expect(heading(page)).to_have_text("Retrieval events")
        pages = page.evaluate(ADMIN_PAGES)
        assert len(pages) == ADMIN_LINKS - 1, pages
        for path in pages:
            page.locator(f'header nav a[href="{path}"]').click()
            expect(page).to_have_url(re.compile(re.escape(path) + "$"))
            expect(heading(page)).to_be_visible()
            page.wait_for_load_state("networkidle")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= viewport["width"], (path, width)
            links = page.evaluate(NAV_LINKS)
            for link in links:
                assert link["right"] <= viewport["width"] and not link["clipped"], (path, link)
            assert page.evaluate(BROKEN_WORDS) == [], path
    finally:
        ctx.close()


def test_phone_conversation_list_is_a_drawer_and_the_header_one_row(
    browser: Browser, shell_server: CitewallServer, screenshot: Callable[[Any, str], None]
) -> None:
    """Defect 7: on a phone the list was a fixed 200 px box above the chat and the header
    wrapped. At 390x844 the header is one row; the list is a drawer its button opens (focus
    moves in, Tab stays in, Escape and the close button close it and focus returns to the
    button); choosing a conversation closes it and opens the conversation."""
    ids = seed_conversations(shell_server, "ray", ["Drawer question one", "Drawer question two"])
    ctx = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = ctx.new_page()
        sign_in(page, shell_server.base_url, shell_server.tokens["ray"], path=f"/c/{ids[1]}")
        expect(heading(page)).to_have_text("Drawer question one")
        # No list above the chat: it waits in the drawer.
        expect(page.locator(".conversations")).to_be_hidden()
        chat_top = page.locator("#chat-title").bounding_box()
        assert chat_top is not None and chat_top["y"] < 120, chat_top
        assert_header_is_one_row(page)
        screenshot(page, "shell-phone-chat")

        toggle = page.get_by_role("button", name="Conversations", exact=True)
        expect(toggle).to_have_attribute("aria-expanded", "false")
        toggle.click()
        drawer = page.get_by_role("dialog", name="Conversations")
        expect(drawer).to_be_visible()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        inside = "document.activeElement.closest('[role=dialog]') !== null"
        assert page.evaluate(inside)
        # Once it has slid in: the whole drawer on screen, full height.
        page.wait_for_function(
            "() => document.getElementById('conversations').getBoundingClientRect().x >= 0"
        )
        box = drawer.bounding_box()
        assert box is not None and box["x"] + box["width"] <= PHONE["width"], box
        assert box["y"] == 0 and box["height"] == PHONE["height"], box
        screenshot(page, "shell-phone-drawer")
        for _ in range(8):
            page.keyboard.press("Tab")
            assert page.evaluate(inside), "Tab left the open drawer"
        page.keyboard.press("Escape")
        expect(drawer).to_have_count(0)
        expect(page.locator(".conversations")).to_be_hidden()
        expect(toggle).to_be_focused()

        toggle.click()
        expect(drawer).to_be_visible()
        page.get_by_role("button", name="Close conversations").click()
        expect(page.locator(".conversations")).to_be_hidden()
        expect(toggle).to_be_focused()

        toggle.click()
        drawer.get_by_role("link", name=re.compile("^Drawer question two")).click()
        expect(page).to_have_url(re.compile(re.escape(f"/c/{ids[0]}") + "$"))
        expect(heading(page)).to_have_text("Drawer question two")
        expect(page.locator(".conversations")).to_be_hidden()
        expect(page.get_by_label("Your question")).to_be_focused()

        admin = ctx.new_page()
        sign_in(admin, shell_server.base_url, shell_server.tokens["ada"], path="/admin/events")
        expect(admin.get_by_role("heading", name="Retrieval events")).to_be_visible()
        assert_nav_links_visible(admin, ADMIN_LINKS)
        expect(admin.get_by_role("button", name="Conversations", exact=True)).to_have_count(0)
    finally:
        ctx.close()


# -- defect 8: the tab title ------------------------------------------------------------------


def test_tab_title_names_the_page(context: BrowserContext, shell_server: CitewallServer) -> None:
    """Defect 8: the tab was always titled "citewall". It names the page: the sign-in, a new
    conversation, the open conversation's title (also a new one, from its first question), and
    each admin page."""
    [conversation] = seed_conversations(shell_server, "tia", ["Where is my parcel"])
    page = context.new_page()
    page.goto(shell_server.base_url + "/")
    expect(page).to_have_title("Sign in - citewall")
    sign_in(page, shell_server.base_url, shell_server.tokens["tia"])
    expect(page).to_have_title("New conversation - citewall")
    page.get_by_role("link", name=re.compile("^Where is my parcel")).click()
    expect(page).to_have_title("Where is my parcel - citewall")
    page.get_by_role("button", name="New conversation").click()
    expect(page).to_have_title("New conversation - citewall")
    ask(page, "How long is the return window?")
    expect(page).to_have_title("How long is the return window? - citewall")
    assert path_of(page) != f"/c/{conversation}"

    admin = context.new_page()
    sign_in(admin, shell_server.base_url, shell_server.tokens["ada"], path="/admin/events")
    expect(admin).to_have_title("Admin · Retrieval events - citewall")
    admin.get_by_role("link", name="Analytics").click()
    expect(admin).to_have_title("Admin · Analytics - citewall")
    admin.get_by_role("link", name="Chat").click()
    expect(admin).to_have_title("New conversation - citewall")
