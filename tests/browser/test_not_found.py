"""Questions the knowledge base does not answer, in Chromium against a real server on the demo
KB: the member sees one honest sentence labelled "Not answered from the knowledge base" with no
sources panel (live and after a reload), and the admin finds the question on the Knowledge gaps
page."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Locator, Page, expect

from .conftest import CitewallServer, api
from .ui import BrowserTraps, ask, sign_in, sse_events

NOT_FOUND_LABEL = "Not answered from the knowledge base"
SMALL_TALK = "hi"
#: Questions the demo KB has no card for; the first the server answers ``not_found`` is used.
UNCOVERED = (
    "where is your office in berlin",
    "who won the football world cup in 1998",
    "what will the weather be in tokyo tomorrow",
)


@pytest.fixture(scope="module")
def uncovered(demo_server: CitewallServer) -> str:
    """An uncovered question the server really answers ``not_found`` (asked once by the API)."""
    seen = []
    for question in UNCOVERED:
        reply = api(
            demo_server,
            "mia",
            "POST",
            "/api/v1/chat",
            json={"message": question, "conversation_id": None},
        )
        if reply["answer_status"] == "not_found":
            assert reply["sources"] == [], reply
            return question
        seen.append((question, reply["answer_status"], reply["answer"][:80]))
    pytest.fail(f"the demo KB answered every uncovered question: {seen}")


def kb_snippets(server: CitewallServer) -> list[str]:
    """Distinctive text of every KB card (titles and the opening of each body)."""
    out = []
    for card in server.kb_cards:
        out.append(str(card.get("title") or ""))
        out.append(str(card.get("body") or card.get("text") or "")[:60])
    return [s for s in out if len(s) >= 12]


def assert_not_found_turn(turn: Locator, server: CitewallServer, *, label: bool = True) -> None:
    if label:
        expect(turn.get_by_test_id("answer-status")).to_have_text(NOT_FOUND_LABEL)
    else:  # small talk is not a failure to answer: no "Not answered" label
        expect(turn.get_by_test_id("answer-status")).to_have_count(0)
    # No sources panel at all: no heading, no "no public sources" line, no chip, no link.
    expect(turn.locator(".sources, .sources-none, .chip, a")).to_have_count(0)
    text = turn.inner_text()
    assert "Sources" not in text
    for snippet in kb_snippets(server):
        assert snippet not in text, f"KB text in a not_found answer: {snippet!r}"


def test_member_sees_not_found_answers_live_and_after_reload(
    context: BrowserContext,
    demo_server: CitewallServer,
    uncovered: str,
    screenshot: Callable[[Any, str], None],
) -> None:
    page = context.new_page()
    traps = BrowserTraps().attach(page)
    sign_in(page, demo_server.base_url, demo_server.tokens["mia"])

    # -- an uncovered question: the stream's final event says not_found, the page labels it ----
    first = ask(page, uncovered)
    final = json.loads(sse_events(first.stream_body)[-1][1])
    assert final["answer_status"] == "not_found", final
    assert final["sources"] == []
    turns = page.locator("li.turn-assistant")
    assert_not_found_turn(turns.nth(0), demo_server)
    assert final["answer"].split(",")[0] in first.answer_text

    # -- small talk in the same conversation: a friendly reply, also not from the KB ----------
    second = ask(page, SMALL_TALK)
    final2 = json.loads(sse_events(second.stream_body)[-1][1])
    assert final2["answer_status"] == "small_talk", final2
    assert final2["conversation_id"] == final["conversation_id"]
    assert_not_found_turn(turns.nth(1), demo_server, label=False)
    screenshot(page, "member-not-found")
    before = turns.all_inner_texts()

    # -- reload: history brings the same status, the same text, still no sources panel -------
    page.reload()
    expect(page).to_have_url(re.compile(r"/c/" + re.escape(final["conversation_id"]) + "$"))
    expect(page.locator("li.turn")).to_have_count(4)
    assert_not_found_turn(turns.nth(0), demo_server)
    assert_not_found_turn(turns.nth(1), demo_server, label=False)
    assert turns.all_inner_texts() == before
    stored = api(demo_server, "mia", "GET", f"/api/v1/conversations/{final['conversation_id']}")
    statuses = [m["answer_status"] for m in stored["messages"]]
    assert statuses == [None, "not_found", None, "small_talk"]
    assert traps.page_errors == [] and traps.csp_violations == []
    assert page.evaluate("window.__badNodes") == []


def test_admin_sees_the_question_on_the_knowledge_gaps_page(
    page: Page,
    demo_server: CitewallServer,
    uncovered: str,
    screenshot: Callable[[Any, str], None],
) -> None:
    # Asked once more, in a new conversation: the page groups both under one row.
    again = api(
        demo_server,
        "mia",
        "POST",
        "/api/v1/chat",
        json={"message": uncovered, "conversation_id": None},
    )
    assert again["answer_status"] == "not_found"
    report = api(demo_server, "ada", "GET", "/api/v1/admin/analytics/knowledge-gaps?period=week")
    group = next(
        g
        for g in report["groups"]
        if any(q["message_id"] == again["message_id"] for q in g["examples"])
    )
    assert group["count"] >= 2 and group["not_found"] >= 2, group

    traps = BrowserTraps().attach(page)
    sign_in(page, demo_server.base_url, demo_server.tokens["ada"], path="/admin/conversations")
    page.get_by_role("link", name="Knowledge gaps").click()
    expect(page).to_have_url(re.compile(r"/admin/gaps$"))
    expect(page.get_by_role("heading", name="Knowledge gaps")).to_be_visible()
    expect(page.get_by_label("Period", exact=True)).to_have_value("week")
    rows = page.locator("table.gaps-table tbody tr")
    expect(rows).to_have_count(len(report["groups"]))
    row = rows.filter(has=page.locator(".question-text", has_text=group["question"])).first
    expect(row.locator("td.gap-count")).to_have_text(str(group["count"]))
    expect(row.locator(".period-counts")).to_contain_text(str(group["count"]))

    # The examples open and link to the admin conversation view of each.
    row.locator("summary", has_text=re.compile(r"^\d+ questions?$")).click()
    links = row.locator(".gap-examples a")
    expect(links).to_have_count(len(group["examples"]))
    expect(links.first).to_have_text(group["examples"][0]["question"])
    screenshot(page, "admin-knowledge-gaps")
    target = group["examples"][0]["conversation_id"]
    links.first.click()
    expect(page).to_have_url(re.compile(f"/admin/conversations/{re.escape(target)}$"))
    meta = page.get_by_test_id("admin-answer-meta")
    expect(meta.first).to_be_visible()
    expect(meta.get_by_test_id("answer-status").last).to_have_text("not_found")
    # The retrieval events (if anything was retrieved) show the query they ran with.
    events = page.locator("table.events-table td.query-cell")
    if events.count():
        expect(events.first).to_contain_text(uncovered)

    # Another period regroups the counts; the rows stay.
    page.get_by_role("link", name="Knowledge gaps").click()
    page.get_by_label("Period", exact=True).select_option("day")
    expect(page.locator("table.gaps-table thead")).to_contain_text("Per day")
    # A window with nothing in it says so.
    page.route(
        re.compile(r".*/api/v1/admin/analytics/knowledge-gaps.*"),
        lambda route: route.fulfill(
            json={
                "period": "day",
                "low_support_below": report["low_support_below"],
                "min_coverage": report["min_coverage"],
                "since": None,
                "until": None,
                "questions": 0,
                "groups": [],
                "answered_badly_questions": 0,
                "answered_badly": [],
            }
        ),
    )
    page.get_by_label("Asked").select_option("day")
    expect(page.get_by_test_id("gaps-empty")).to_have_text(
        "No unanswered questions in this period."
    )
    assert traps.page_errors == [] and traps.csp_violations == []
