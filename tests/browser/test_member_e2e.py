"""End to end in Chromium against a real `citewall serve` on the demo KB (extractive generator,
reranked "full" path): sign in, ask, streamed answer, source popover, follow-up, reload."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import httpx
from playwright.sync_api import Browser, BrowserContext, Page, expect

from .conftest import CitewallServer
from .ui import BrowserTraps, anchors, ask, normalised, sign_in, sse_events

QUESTION = "How do I create my first shipping label?"
FOLLOW_UP = "Can I void a label I did not use?"


def chip_titles(page: Page) -> list[str]:
    return [t.strip() for t in page.locator(".chip .chip-title").all_inner_texts()]


def test_member_asks_streams_opens_source_follows_up_and_reloads(
    context: BrowserContext, demo_server: CitewallServer, screenshot: Callable[[Any, str], None]
) -> None:
    page = context.new_page()
    traps = BrowserTraps().attach(page)
    response = page.goto(demo_server.base_url + "/")
    assert response is not None
    assert "script-src 'self'" in response.headers["content-security-policy"]
    sign_in(page, demo_server.base_url, demo_server.tokens["mia"])
    expect(page.locator(".who")).to_contain_text("mia")
    expect(page.get_by_role("link", name="Analytics")).to_have_count(0)  # member: no admin nav

    # -- ask: the answer streams in over SSE, then the final event brings the sources ----------
    first = ask(page, QUESTION)
    events = sse_events(first.stream_body)
    names = [name for name, _ in events]
    assert names[0] == "meta" and names[-1] == "final", names
    assert names.count("token") >= 2, "the answer was not streamed in several deltas"
    final = json.loads(events[-1][1])
    streamed = "".join(json.loads(d)["delta"] for n, d in events if n == "token")
    assert streamed.strip() == final["answer"].strip()
    assert final["hybrid_path"] == "full"
    assert final["sources"], "the demo question should cite at least one external source"
    # The DOM shows the final prose, without [n] markers.
    answer = page.locator("li.turn-assistant").first.locator("[data-testid=answer]")
    assert not re.search(r"\[\d+\]", answer.inner_text())
    assert final["answer"].split()[0] in answer.inner_text()
    samples: list[str] = page.evaluate("window.__streamSamples")
    # Streamed: deltas arrived ahead of the final event, and answer text was on screen while
    # the turn was still busy (before the final event).
    print(f"chunks={len(first.chunks)} lead={first.token_lead_ms():.0f}ms samples={len(samples)}")
    assert len(first.chunks) >= 2, first.chunks
    if first.token_lead_ms() > 100:
        assert samples, "deltas came before the final event but no text was shown early"
    expect(page).to_have_url(re.compile(r"/c/" + re.escape(final["conversation_id"]) + "$"))
    expect(page.locator(".conversation-item[aria-current=page]")).to_have_count(1)

    # -- the sources panel: one chip per external source ---------------------------------------
    titles = chip_titles(page)
    assert titles == [s["title"] for s in final["sources"]]

    # -- a chip opens an accessible popover with a safe link ----------------------------------
    chip = page.locator(".chip").first
    chip.click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_have_accessible_name(final["sources"][0]["title"])
    assert page.evaluate("document.activeElement.closest('[role=dialog]') !== null")
    expect(chip).to_have_attribute("aria-expanded", "true")
    link = dialog.locator("a.source-link")
    expect(link).to_have_attribute("target", "_blank")
    rel = (link.get_attribute("rel") or "").split()
    assert "noopener" in rel and "noreferrer" in rel
    href = link.get_attribute("href") or ""
    assert href.startswith(("https://", "http://"))
    assert href == normalised(final["sources"][0]["url"], page)
    assert href in {normalised(u, page) for u in demo_server.external_urls}
    first_source = final["sources"][0]
    expect(dialog).to_contain_text(first_source.get("license") or "Not stated")
    score = round(first_source["retrieved_score"])
    expect(dialog.locator(".score")).to_have_text(f"{score} / 100")
    if first_source.get("excerpt"):
        expect(dialog.locator("blockquote")).to_contain_text(first_source["excerpt"][:40])
    screenshot(page, "member-popover")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(chip).to_be_focused()

    # -- follow-up in the same conversation ----------------------------------------------------
    second = ask(page, FOLLOW_UP)
    final2 = json.loads(sse_events(second.stream_body)[-1][1])
    assert final2["conversation_id"] == final["conversation_id"]
    expect(page.locator("li.turn")).to_have_count(4)
    before_reload = {
        "answers": page.locator("li.turn-assistant [data-testid=answer]").all_inner_texts(),
        "questions": page.locator("li.turn-user .question").all_inner_texts(),
        "chips": chip_titles(page),
    }
    screenshot(page, "member-conversation")

    # -- reload: the token survives in sessionStorage; history shows the same answer+sources ---
    page.reload()
    expect(page.locator("li.turn")).to_have_count(4)
    expect(
        page.locator("li.turn-assistant .sources, li.turn-assistant .sources-none")
    ).to_have_count(2)
    after_reload = {
        "answers": page.locator("li.turn-assistant [data-testid=answer]").all_inner_texts(),
        "questions": page.locator("li.turn-user .question").all_inner_texts(),
        "chips": chip_titles(page),
    }
    assert after_reload == before_reload
    assert before_reload["questions"] == [QUESTION, FOLLOW_UP]
    # Only verified KB links in the member's view, all opening safely in a new tab; the
    # header holds only the app's own navigation.
    kb = {normalised(u, page) for u in demo_server.external_urls}
    page.locator(".chip").first.click()
    for a in anchors(page, "#main"):
        assert a["href"] in kb, a
        assert a["target"] == "_blank" and "noopener" in (a["rel"] or "")
    assert [a["attr"] for a in anchors(page, "header")] == ["/"]
    assert traps.dialogs == [] and traps.page_errors == []
    assert traps.csp_violations == [], traps.csp_violations
    assert page.evaluate("window.__badNodes") == []


def test_keyboard_and_narrow_screen(
    browser: Browser, demo_server: CitewallServer, screenshot: Callable[[Any, str], None]
) -> None:
    """History view on a phone-sized screen, driven by the keyboard alone."""
    token = demo_server.tokens["mia"]
    reply = httpx.post(
        f"{demo_server.base_url}/api/v1/chat",
        json={"message": "How long is the return window?", "conversation_id": None},
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )
    assert reply.status_code == 200, reply.text
    data = reply.json()
    assert data["sources"], data
    ctx = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True)
    try:
        page = ctx.new_page()
        sign_in(page, demo_server.base_url, token, path=f"/c/{data['conversation_id']}")
        expect(page.locator("li.turn-assistant")).to_have_count(1)
        # Nothing is wider than the screen (no sideways scrolling).
        wide = page.evaluate(
            """() => [...document.querySelectorAll('body *')]
                .filter(e => e.getBoundingClientRect().right > innerWidth + 1)
                .map(e => e.tagName + '.' + e.className)"""
        )
        assert page.evaluate("document.documentElement.scrollWidth") <= 375, wide
        chip = page.locator(".chip").first
        chip.focus()
        page.keyboard.press("Enter")
        dialog = page.get_by_role("dialog")
        expect(dialog).to_be_focused()
        # Tab moves through the dialog and stays inside it.
        for _ in range(4):
            page.keyboard.press("Tab")
            assert page.evaluate("document.activeElement.closest('[role=dialog]') !== null")
        box = dialog.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 376
        screenshot(page, "member-narrow-popover")
        page.keyboard.press("Escape")
        expect(dialog).to_have_count(0)
        expect(chip).to_be_focused()
    finally:
        ctx.close()


def test_bad_token_is_refused_with_a_message(page: Page, demo_server: CitewallServer) -> None:
    page.goto(demo_server.base_url + "/")
    page.get_by_label("Access token").fill("not-a-real-token")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("not accepted")
    assert page.evaluate("sessionStorage.length") == 0
