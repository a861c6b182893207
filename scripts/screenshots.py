"""Screenshots of the web UI for docs/web.md, at 1280x800 and 390x844, in Debian Chromium.

Runs a throwaway ``citewall serve`` on the demo KB (extractive answers, no reranker: no
trained cross-encoder ships offline, and the embedding model loaded as one has an untrained
head whose scores mean nothing, so answers take the ``rrf_only`` path and a source's popover
says that no relevance score was recorded), has the demo member ask a few questions and
rate two answers through the API, then photographs what a person sees: the member chat, a
source popover, a ``not_found`` answer and the admin's analytics. The web UI must be built
(``scripts/install``). From the repository root:

    .venv/bin/python scripts/screenshots.py            # writes docs/images/*.png
    .venv/bin/python scripts/screenshots.py --out DIR
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Page, expect, sync_playwright

from citewall_evals.bench.server import add_user, bench_env, prepare, serving

ROOT = Path(__file__).resolve().parents[1]
KB = ROOT / "kb" / "demo" / "cards.jsonl"
WEB_DIST = ROOT / "citewall" / "web_dist"
CHROMIUM = "/usr/bin/chromium"
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
QUESTIONS = ("How do I void an unused label?", "How long does the refund take?")
#: Questions the demo KB has no card for; the first answered ``not_found`` is shown.
UNCOVERED = ("where is your office in berlin", "what will the weather be in tokyo tomorrow")
TIMEOUT_MS = 60_000


class Api:
    """The few API calls that set the scene, as one user."""

    def __init__(self, base_url: str, token: str) -> None:
        self.http = httpx.Client(
            base_url=base_url + "/api/v1",
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )

    def call(self, method: str, path: str, **kw: Any) -> Any:
        r = self.http.request(method, path, **kw)
        r.raise_for_status()
        return r.json()

    def ask(self, question: str, conversation_id: str | None = None) -> dict[str, Any]:
        body = {"message": question, "conversation_id": conversation_id}
        return dict(self.call("POST", "/chat", json=body))


def set_scene(member: Api) -> tuple[str, str]:
    """A two-question conversation with its answers rated, and a ``not_found`` one."""
    first = member.ask(QUESTIONS[0])
    conversation = first["conversation_id"]
    second = member.ask(QUESTIONS[1], conversation)
    for answer, rating, comment in (
        (first, "up", None),
        (second, "down", "I wanted the refund for a label, not an order."),
    ):
        member.call(
            "PUT",
            f"/messages/{answer['message_id']}/feedback",
            json={"rating": rating, "comment": comment},
        )
    for question in UNCOVERED:
        reply = member.ask(question)
        if reply["answer_status"] == "not_found":
            return conversation, reply["conversation_id"]
    raise RuntimeError("the demo KB answered every uncovered question")


def sign_in(page: Page, base_url: str, token: str, path: str) -> None:
    page.goto(base_url + path)
    page.get_by_label("Access token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


def shoot(page: Page, out: Path, name: str) -> None:
    path = out / f"{name}.png"
    page.screenshot(path=str(path), animations="disabled", caret="hide")
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


def photograph(base_url: str, tokens: dict[str, str], scene: tuple[str, str], out: Path) -> None:
    answered, not_found = scene
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for size, viewport in SIZES.items():
            member = browser.new_context(viewport=viewport)
            page = member.new_page()
            sign_in(page, base_url, tokens["member"], f"/c/{answered}")
            chip = page.locator(".chip").last
            expect(chip).to_be_visible(timeout=TIMEOUT_MS)
            page.locator("li.turn-assistant").last.scroll_into_view_if_needed()
            shoot(page, out, f"member-chat-{size}")
            chip.click()
            expect(page.get_by_role("dialog")).to_be_visible()
            shoot(page, out, f"source-popover-{size}")
            page.keyboard.press("Escape")
            page.goto(f"{base_url}/c/{not_found}")
            expect(page.get_by_test_id("answer-status").first).to_be_visible(timeout=TIMEOUT_MS)
            shoot(page, out, f"not-found-{size}")
            member.close()

            admin = browser.new_context(viewport=viewport)
            page = admin.new_page()
            sign_in(page, base_url, tokens["admin"], "/admin/analytics")
            expect(page.locator("svg.chart-trend")).to_be_visible(timeout=TIMEOUT_MS)
            expect(page.get_by_test_id("feedback-summary")).to_be_visible(timeout=TIMEOUT_MS)
            shoot(page, out, f"admin-analytics-{size}")
            page.locator("section.admin-feedback").scroll_into_view_if_needed()
            shoot(page, out, f"admin-feedback-{size}")
            admin.close()
        browser.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    args = parser.parse_args(argv)
    if not (WEB_DIST / "index.html").is_file():
        print(f"the web UI is not built ({WEB_DIST}): run scripts/install", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        env = bench_env(
            Path(tmp) / "data",
            generator="extractive",
            reranker_enabled="false",
        )
        tokens = {"member": prepare(env, KB, "mia"), "admin": add_user(env, "ada", "admin")}
        with serving(env, Path(tmp) / "serve.log") as served:
            scene = set_scene(Api(served.base_url, tokens["member"]))
            photograph(served.base_url, tokens, scene, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
