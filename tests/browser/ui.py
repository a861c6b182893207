"""What a person does in the citewall UI, as small functions over a Playwright page."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import BrowserContext, Page, expect

ANSWER_TIMEOUT_MS = 60_000

#: Records, while an answer streams in, each distinct text the answer shows (runs before the
#: app; injected by the browser, not the page, so the page's CSP does not apply to it).
STREAM_RECORDER = """
(() => {
  window.__streamSamples = [];
  const sample = () => {
    const el = document.querySelector(
      'li.turn-assistant[aria-busy="true"] [data-testid="answer"] .markdown');
    if (!el) return;
    const text = el.textContent || "";
    const s = window.__streamSamples;
    if (text && s[s.length - 1] !== text) s.push(text);
  };
  new MutationObserver(sample).observe(document, {
    subtree: true, childList: true, characterData: true });
})();
"""

#: Keeps a copy of every chat stream the app reads (a tee of the fetch body), with the arrival
#: time of each chunk: what the server really sent, and whether it came in pieces.
SSE_RECORDER = """
(() => {
  const original = window.fetch;
  window.__sse = [];
  window.fetch = async function (input, init) {
    const response = await original.call(this, input, init);
    const url = typeof input === "string" ? input : input.url;
    if (!url.includes("/api/v1/chat/stream") || !response.body) return response;
    const [mine, theirs] = response.body.tee();
    const record = { chunks: [], done: false };
    window.__sse.push(record);
    (async () => {
      const reader = theirs.pipeThrough(new TextDecoderStream()).getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          record.chunks.push({ t: performance.now(), text: value });
        }
      } catch (e) {
        record.aborted = String(e);  // the app stopped the answer (AbortController)
      }
      record.done = true;
    })();
    return new Response(mine, {
      status: response.status, statusText: response.statusText, headers: response.headers });
  };
})();
"""

#: Notes every dangerous element or event-handler attribute ever inserted where data is shown,
#: including transient ones (a partial render while an answer streams in).
DOM_WATCH = """
(() => {
  window.__badNodes = [];
  const BAD = ["script", "iframe", "frame", "img", "object", "embed", "form", "base", "meta",
               "link", "style", "svg", "math", "video", "audio", "source"];
  new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (node.nodeType !== 1 || !node.closest("#root")) continue;
        for (const el of [node, ...node.querySelectorAll("*")]) {
          // Only where answer, source, title or card text is shown; the app's own forms are fine.
          if (!el.closest(".turns, .conversations, .admin-page")) continue;
          const tag = el.tagName.toLowerCase();
          // A control the app itself renders (data-app-control); its contents are still watched.
          const own = el.hasAttribute("data-app-control");
          if (BAD.includes(tag) && !own && !el.classList.contains("chart")
              && !el.closest("svg.chart"))
            window.__badNodes.push(tag);
          for (const attr of el.attributes)
            if (/^on/i.test(attr.name)) window.__badNodes.push(tag + "[" + attr.name + "]");
        }
      }
    }
  }).observe(document, { subtree: true, childList: true });
})();
"""

#: Traps for script execution: any dialog, and a global flag hostile payloads try to set.
PWNED_PROBE = "() => typeof window.__pwned === 'undefined' ? null : String(window.__pwned)"


@dataclass
class BrowserTraps:
    """Dialogs, console CSP reports, page errors and failed requests seen by a page."""

    dialogs: list[str] = field(default_factory=list)
    csp_violations: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    #: "METHOD path status" of each response >= 400, and of each request that got none.
    failed_requests: list[str] = field(default_factory=list)

    def attach(self, page: Page) -> BrowserTraps:
        def on_dialog(dialog: Any) -> None:
            self.dialogs.append(f"{dialog.type}: {dialog.message}")
            dialog.dismiss()

        page.on("dialog", on_dialog)
        page.on(
            "console",
            lambda msg: (
                self.csp_violations.append(msg.text)
                if "Content Security Policy" in msg.text
                else None
            ),
        )
        page.on("pageerror", lambda err: self.page_errors.append(str(err)))
        page.on(
            "response",
            lambda r: (
                self.failed_requests.append(f"{r.request.method} {urlsplit(r.url).path} {r.status}")
                if r.status >= 400
                else None
            ),
        )
        page.on(
            "requestfailed",
            lambda r: self.failed_requests.append(f"{r.method} {urlsplit(r.url).path} failed"),
        )
        return self


def wait_until(page: Page, script: str, timeout_s: float = 10.0) -> None:
    """Poll ``script`` (a JS expression) until it is truthy. Not ``page.wait_for_function``:
    once its first check fails it evaluates the predicate with eval, which the app's CSP
    forbids."""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(script):
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout_s}s: {script}")
        page.wait_for_timeout(100)


def sign_in(page: Page, base_url: str, token: str, path: str = "/") -> None:
    """Open ``path`` and sign in with ``token`` through the form."""
    page.goto(base_url + path)
    page.get_by_label("Access token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


def install_recorders(context: BrowserContext) -> None:
    """Record chat streams and streamed answer text in every page of ``context``."""
    context.add_init_script(SSE_RECORDER)
    context.add_init_script(STREAM_RECORDER)
    context.add_init_script(DOM_WATCH)


@dataclass
class AskResult:
    answer_text: str
    #: The SSE body the app received, as (arrival ms, text) network chunks.
    chunks: list[tuple[float, str]]
    turn_index: int

    @property
    def stream_body(self) -> str:
        return "".join(text for _, text in self.chunks)

    def token_lead_ms(self) -> float:
        """How long before the final event the first token delta arrived (0 if together)."""
        first_token = next(t for t, text in self.chunks if "event: token" in text)
        final = next(t for t, text in self.chunks if "event: final" in text)
        return final - first_token


def ask(page: Page, question: str) -> AskResult:
    """Type ``question``, send it with Enter, wait for the answer to finish streaming.

    The page's context must have ``install_recorders`` applied.
    """
    before = page.locator("li.turn-assistant").count()
    streams = int(page.evaluate("window.__sse.length"))
    box = page.get_by_label("Your question")
    box.fill(question)
    box.press("Enter")
    turn = page.locator("li.turn-assistant").nth(before)
    expect(turn).to_have_attribute("aria-busy", "false", timeout=ANSWER_TIMEOUT_MS)
    assert turn.locator(".error").count() == 0, turn.locator(".error").inner_text()
    wait_until(page, f"window.__sse.length > {streams} && window.__sse[{streams}].done")
    chunks = page.evaluate(f"window.__sse[{streams}].chunks.map(c => [c.t, c.text])")
    return AskResult(
        turn.locator("[data-testid=answer]").inner_text(),
        [(float(t), str(text)) for t, text in chunks],
        before,
    )


def sse_events(body: str) -> list[tuple[str, str]]:
    """(event, data) pairs of an SSE body, for checking what the server actually sent."""
    out = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        name, data = "message", []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            out.append((name, "\n".join(data)))
    return out


def anchors(page: Page, scope: str = "body") -> list[dict[str, str | None]]:
    """Every `<a>` under ``scope``: raw href attribute, resolved href, target, rel, text."""
    return page.eval_on_selector_all(
        f"{scope} a",
        """els => els.map(a => ({
            attr: a.getAttribute('href'), href: a.href, target: a.getAttribute('target'),
            rel: a.getAttribute('rel'), text: a.textContent }))""",
    )


def normalised(url: str, page: Page) -> str:
    """``url`` as the browser's URL parser writes it (what `a.href` reports)."""
    return str(page.evaluate("u => new URL(u).href", url))


def is_http(url: str | None) -> bool:
    return bool(url) and urlsplit(url or "").scheme in {"http", "https"}


#: The focused element's outline and the surface it is drawn on: the background of the
#: nearest ancestor that paints one (the ring sits outside the element, past its offset).
FOCUS_RING = r"""() => {
  const el = document.activeElement;
  const style = getComputedStyle(el);
  const painted = (c) => c !== "transparent" && !/^rgba\(.*,\s*0\)$/.test(c);
  let surface = getComputedStyle(document.documentElement).backgroundColor;
  for (let p = el.parentElement; p; p = p.parentElement) {
    const bg = getComputedStyle(p).backgroundColor;
    if (painted(bg)) { surface = bg; break; }
  }
  return {
    what: el.tagName.toLowerCase() + " " +
      (el.getAttribute("aria-label") || el.textContent || el.id).trim().slice(0, 40),
    focusVisible: el.matches(":focus-visible"),
    style: style.outlineStyle,
    width: parseFloat(style.outlineWidth),
    color: style.outlineColor,
    surface,
  };
}"""


def rgb(css: str) -> tuple[float, float, float]:
    """An `rgb()`/`rgba()` computed colour as 0-255 channels."""
    match = re.fullmatch(r"rgba?\(\s*([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*[\d.]+)?\s*\)", css)
    assert match, f"not an rgb() colour: {css}"
    r, g, b = (float(v) for v in match.groups())
    return r, g, b


def contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    """WCAG 2 contrast ratio of two sRGB colours (1 to 21)."""

    def luminance(c: tuple[float, float, float]) -> float:
        def linear(v: float) -> float:
            s = v / 255
            return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

        r, g, b = (linear(v) for v in c)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def focus_ring(page: Page) -> dict[str, Any]:
    """The focused element's outline (style, width, colour) and the surface behind it."""
    return dict(page.evaluate(FOCUS_RING))
