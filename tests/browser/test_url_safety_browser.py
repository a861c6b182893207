"""The URL-safety corpus in Debian Chromium, against the built client code.

Every link the UI makes passes ``safeHttpUrl``; the Node tests (``web/tests/safeUrl.test.ts``)
prove it on Node's URL parser. Here the same corpus (``web/tests/urlCorpus.js``, imported as it
is) runs inside a page of the running app, under the app's own CSP, against the built module the
app itself imports (``assets/safe-url-<hash>.js``): the check is proven in the engine that
renders the links.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, Route, expect

from .conftest import REPO_ROOT, WEB_DIST, CitewallServer
from .ui import BrowserTraps

CORPUS = REPO_ROOT / "web" / "tests" / "urlCorpus.js"
#: Where the page imports the corpus from: same origin (the CSP's 'self'), answered by the test.
CORPUS_PATH = "/__corpus__/urlCorpus.js"

RUN_CORPUS = """
async ([modulePath, corpusPath]) => {
  const { safeHttpUrl, MAX_URL_LENGTH } = await import(modulePath);
  const { urlCases } = await import(corpusPath);
  const { hostile, safe } = urlCases(MAX_URL_LENGTH);
  const show = (u) => JSON.stringify(u).slice(0, 120);
  return {
    maxLength: MAX_URL_LENGTH,
    hostile: hostile.length,
    safe: safe.length,
    accepted: hostile.filter((u) => safeHttpUrl(u) !== null).map(show),
    wrong: safe
      .filter(([u, want]) => safeHttpUrl(u) !== want)
      .map(([u, want]) => `${show(u)} -> ${show(safeHttpUrl(u))}, want ${show(want)}`),
    notStrings: [null, undefined, 1, {}, [], ["https://example.com"]].filter(
      (v) => safeHttpUrl(v) !== null).length,
  };
}
"""


def built_gate() -> str:
    """The path of the built URL gate, the one module the app imports ``safeHttpUrl`` from."""
    found = sorted((WEB_DIST / "assets").glob("safe-url-*.js"))
    assert len(found) == 1, f"expected one built safe-url module, found {found}"
    return f"/assets/{found[0].name}"


def test_url_safety_corpus_runs_in_chromium_against_the_built_code(
    page: Page, demo_server: CitewallServer
) -> None:
    gate = built_gate()
    traps = BrowserTraps().attach(page)

    def serve_corpus(route: Route) -> None:
        route.fulfill(path=CORPUS, content_type="text/javascript; charset=utf-8")

    page.route(f"**{CORPUS_PATH}", serve_corpus)
    response = page.goto(demo_server.base_url + "/")
    assert response is not None
    # The page keeps the app's CSP: scripts from this origin only.
    csp = response.headers.get("content-security-policy", "")
    assert "script-src 'self'" in csp, csp
    expect(page.get_by_label("Access token")).to_be_visible()
    # The app itself loaded the gate the corpus is run against.
    loaded = page.evaluate(
        "() => performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)"
    )
    assert gate in loaded, loaded

    result: dict[str, Any] = page.evaluate(RUN_CORPUS, [gate, CORPUS_PATH])
    assert result["maxLength"] == 2048
    assert result["hostile"] + result["safe"] >= 1000, result
    assert result["safe"] >= 15
    assert result["accepted"] == [], "Chromium accepted hostile URLs"
    assert result["wrong"] == [], "Chromium normalised safe URLs differently"
    assert result["notStrings"] == 0
    assert traps.csp_violations == [] and traps.page_errors == []
