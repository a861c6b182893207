"""axe-core on every member and admin page, at 1280x800 and 390x844: no serious or critical
violation.

axe comes from the npm package (``web/node_modules/axe-core``, installed by ``npm ci``) and is
injected by the browser as an init script, so the app's CSP stays exactly as served. Each page
is checked in the state a person sees it: the sign-in form, an empty and an answered
conversation, a source popover open, a ``not_found`` answer, and every admin page with data.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from .conftest import REPO_ROOT, CitewallServer, api
from .ui import BrowserTraps, sign_in

AXE = REPO_ROOT / "web" / "node_modules" / "axe-core" / "axe.min.js"
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
BLOCKING = ("serious", "critical")
#: Questions the demo KB has no card for; the first the server answers ``not_found`` is used.
UNCOVERED = (
    "where is your office in berlin",
    "who won the football world cup in 1998",
    "what will the weather be in tokyo tomorrow",
)

RUN_AXE = """
async (blocking) => {
  const result = await window.axe.run(document, {
    resultTypes: ["violations"],
    runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
  });
  return result.violations
    .filter((v) => blocking.includes(v.impact))
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ")),
    }));
}
"""


@dataclass(frozen=True)
class Seeded:
    """What the pages show: a member's answered and not-found conversations."""

    answered: str
    not_found: str
    member_id: str
    card_id: str


@pytest.fixture(scope="module")
def seeded(demo_server: CitewallServer) -> Seeded:
    answered = api(
        demo_server,
        "mia",
        "POST",
        "/api/v1/chat",
        json={"message": "How do I void an unused label?", "conversation_id": None},
    )
    assert answered["sources"], "the answer needs a source chip for the popover"
    not_found = None
    for question in UNCOVERED:
        reply = api(
            demo_server,
            "mia",
            "POST",
            "/api/v1/chat",
            json={"message": question, "conversation_id": None},
        )
        if reply["answer_status"] == "not_found":
            not_found = reply["conversation_id"]
            break
    assert not_found, "the demo KB answered every uncovered question"
    conv = api(
        demo_server, "ada", "GET", f"/api/v1/admin/conversations/{answered['conversation_id']}"
    )
    return Seeded(
        answered["conversation_id"],
        not_found,
        str(conv["user_id"]),
        answered["sources"][0]["card_id"],
    )


@pytest.fixture(params=list(SIZES))
def axe_context(request: pytest.FixtureRequest, browser: Browser) -> Iterator[BrowserContext]:
    """A context of one size with axe injected into every page."""
    assert AXE.is_file(), f"{AXE} is missing: run `cd web && npm ci`"
    ctx = browser.new_context(viewport=SIZES[request.param])
    ctx.add_init_script(path=str(AXE))
    yield ctx
    ctx.close()


def violations(page: Page, what: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = page.evaluate(RUN_AXE, list(BLOCKING))
    return [{"page": what, **v} for v in found]


def report(found: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"{v['page']}: {v['impact']} {v['id']} ({v['help']}) at {v['nodes']}" for v in found
    )


def test_member_pages(
    axe_context: BrowserContext, demo_server: CitewallServer, seeded: Seeded
) -> None:
    page = axe_context.new_page()
    traps = BrowserTraps().attach(page)
    found = []
    page.goto(demo_server.base_url + "/")
    expect(page.get_by_label("Access token")).to_be_visible()
    found += violations(page, "sign-in")

    sign_in(page, demo_server.base_url, demo_server.tokens["mia"])
    expect(page.get_by_label("Your question")).to_be_visible()
    found += violations(page, "new conversation")

    page.goto(f"{demo_server.base_url}/c/{seeded.answered}")
    chip = page.locator(".chip").first
    expect(chip).to_be_visible()
    found += violations(page, "answered conversation")
    chip.click()
    expect(page.get_by_role("dialog")).to_be_visible()
    found += violations(page, "source popover")

    page.goto(f"{demo_server.base_url}/c/{seeded.not_found}")
    expect(page.get_by_test_id("answer-status").first).to_be_visible()
    found += violations(page, "not-found answer")
    assert found == [], "\n" + report(found)
    assert traps.csp_violations == [] and traps.page_errors == []


def test_admin_pages(
    axe_context: BrowserContext, demo_server: CitewallServer, seeded: Seeded
) -> None:
    page = axe_context.new_page()
    traps = BrowserTraps().attach(page)
    sign_in(page, demo_server.base_url, demo_server.tokens["ada"], path="/admin/conversations")
    pages = {
        "/admin/conversations": "table",
        f"/admin/conversations/{seeded.answered}": "[data-testid=admin-answer]",
        "/admin/cards": "table.cards-table",
        f"/admin/cards/{quote(seeded.card_id, safe='')}": "[data-testid=card-detail]",
        "/admin/analytics": "svg.chart-trend",
        "/admin/events": "table.events-table",
        "/admin/gaps": "table.gaps-table",
        "/admin/exposure": "[data-testid=exposure-budget]",
        f"/admin/exposure/{seeded.member_id}": "[data-testid=exposure-budget]",
    }
    found = []
    for path, ready in pages.items():
        page.goto(demo_server.base_url + path)
        expect(page.locator(ready).first).to_be_visible()
        expect(page.get_by_role("status").filter(has_text="Loading")).to_have_count(0)
        found += violations(page, path)
    assert found == [], "\n" + report(found)
    assert traps.csp_violations == [] and traps.page_errors == []
