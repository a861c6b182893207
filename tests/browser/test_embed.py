"""The embeddable chat on a host site's page, in Chromium with third-party cookies blocked,
against a real `citewall serve` that signs members in with the host's HS256 tokens and lets one
origin embed it.

The host site (``embed_host.py``) is another site (http://localhost:<port>; citewall is
http://127.0.0.1:<port>): its page includes ``embed.js`` and its token endpoint signs a JWT for
its signed-in member. The member signs in, asks, sees sources, reloads and finds the same
conversation; on a phone too. A page of an origin that is not allowlisted cannot frame the chat.
No citewall cookie is ever set, and no citewall token ever reaches the host page or a URL.
The server hands off to a helpdesk on loopback: after "not found" the embedded chat offers
"Talk to a person" as the member chat does, and the request reaches the helpdesk once.
"""

from __future__ import annotations

import json
import re
import secrets
import subprocess
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from handoff_receiver import Receiver
from playwright.sync_api import Browser, BrowserType, Frame, Page, Request, Response, expect

from .conftest import CITEWALL, REPO_ROOT, CitewallServer, start_server, stop_server
from .embed_host import AUDIENCE, ISSUER, HostSite, host_site
from .ui import BrowserTraps, ask, install_recorders, normalised, sse_events, wait_until

QUESTION = "How do I create my first shipping label?"
FOLLOW_UP = "Can I void a label I did not use?"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 360, "height": 740}
SECRET = secrets.token_urlsafe(32)
#: A citewall token (API or session): `cw_` and 40 url-safe characters.
CITEWALL_TOKEN = re.compile(r"cw_[A-Za-z0-9_-]{20,}")
#: Chromium's switch that blocks third-party cookies as the phase-out does.
BLOCK_THIRD_PARTY_COOKIES = "--test-third-party-cookie-phaseout"
SESSION_PATH = "/api/v1/auth/session"
#: A question the demo KB has no card for (test_not_found.py asks it too).
UNCOVERED = "where is your office in berlin"
HANDOFF_SECRET = "embed-handoff-secret-0123456789"

#: Every message the host page's window receives (what the chat tells the host).
HOST_MESSAGES = """
if (window.top === window) {
  window.__hostMessages = [];
  window.addEventListener("message", (e) => window.__hostMessages.push(JSON.stringify(e.data)));
}
"""


@pytest.fixture(scope="module")
def sites() -> Iterator[tuple[HostSite, HostSite]]:
    """The host site that may embed the chat, and a stranger site that may not."""
    with ExitStack() as stack:
        yield stack.enter_context(host_site(SECRET)), stack.enter_context(host_site(SECRET))


@pytest.fixture(scope="module")
def helpdesk() -> Iterator[Receiver]:
    """The team's helpdesk on loopback, checking each delivery's signature."""
    receiver = Receiver(secret=HANDOFF_SECRET).start()
    try:
        yield receiver
    finally:
        receiver.stop()


@pytest.fixture(scope="module")
def embed_server(
    tmp_path_factory: pytest.TempPathFactory,
    demo_kb: Any,
    sites: tuple[HostSite, HostSite],
    helpdesk: Receiver,
) -> Iterator[CitewallServer]:
    host, stranger = sites
    server = start_server(
        tmp_path_factory.mktemp("embed"),
        [demo_kb],
        {},
        {
            "CITEWALL_GENERATOR": "extractive",
            "CITEWALL_RERANKER_ENABLED": "false",
            "CITEWALL_MEMBER_JWT_SECRET": SECRET,
            "CITEWALL_MEMBER_JWT_ISSUER": ISSUER,
            "CITEWALL_MEMBER_JWT_AUDIENCE": AUDIENCE,
            "CITEWALL_EMBED_ORIGINS": json.dumps([host.origin]),
            "CITEWALL_HANDOFF_WEBHOOK_URL": helpdesk.url,
            "CITEWALL_HANDOFF_WEBHOOK_SECRET": HANDOFF_SECRET,
            "CITEWALL_HANDOFF_POLL_S": "0.5",
        },
    )
    host.citewall_url = stranger.citewall_url = server.base_url
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture(scope="module")
def blocking_browser(
    browser_type: BrowserType, browser_type_launch_args: dict[str, Any]
) -> Iterator[Browser]:
    """Chromium that blocks third-party cookies: the embedded chat must not need any."""
    args = [*browser_type_launch_args["args"], BLOCK_THIRD_PARTY_COOKIES]
    browser = browser_type.launch(**{**browser_type_launch_args, "args": args})
    yield browser
    browser.close()


@dataclass
class Visit:
    """A member's browser on the host site, with what it sent and received."""

    page: Page
    traps: BrowserTraps
    site: HostSite
    member: str
    urls: list[str] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)
    cookies_set: list[str] = field(default_factory=list)


@pytest.fixture
def visit(
    blocking_browser: Browser, embed_server: CitewallServer
) -> Iterator[Callable[[HostSite, str, dict[str, int]], Visit]]:
    """Open a host site's page as a member signed in to it, in a fresh browser context."""
    contexts = []

    def open_as(site: HostSite, member: str, viewport: dict[str, int]) -> Visit:
        ctx = blocking_browser.new_context(viewport=viewport, is_mobile=viewport["width"] < 500)
        contexts.append(ctx)
        install_recorders(ctx)
        ctx.add_init_script(HOST_MESSAGES)
        page = ctx.new_page()
        seen = Visit(page, BrowserTraps().attach(page), site, member)

        def on_request(request: Request) -> None:
            seen.urls.append(request.url)
            if "authorization" in request.headers:
                seen.authorizations.append(request.headers["authorization"])

        def on_response(response: Response) -> None:
            if response.url.startswith(embed_server.base_url) and "set-cookie" in response.headers:
                seen.cookies_set.append(response.url)

        page.on("request", on_request)
        page.on("response", on_response)
        return seen

    yield open_as
    for ctx in contexts:
        ctx.close()


def is_session_post(response: Response) -> bool:
    return bool(response.url.endswith(SESSION_PATH) and response.request.method == "POST")


def load_chat(seen: Visit, reload: bool = False) -> tuple[Frame, dict[str, Any]]:
    """Sign in to the host site and open its page (or reload it); the chat's frame once it
    signed in with the host's token, and the session it got."""
    page = seen.page
    with page.expect_response(is_session_post, timeout=30_000) as created:
        if reload:
            page.reload()
        else:
            page.goto(f"{seen.site.origin}/login?as={seen.member}")
    assert created.value.status == 201, created.value.text()
    handle = page.locator("#citewall-chat iframe").element_handle()
    frame = handle.content_frame() if handle else None
    assert frame is not None
    expect(frame.get_by_label("Your question")).to_be_enabled(timeout=30_000)
    return frame, dict(created.value.json())


def chip_titles(frame: Frame) -> list[str]:
    return [t.strip() for t in frame.locator(".chip .chip-title").all_inner_texts()]


def test_a_member_chats_on_the_host_page_and_finds_the_conversation_after_a_reload(
    visit: Callable[[HostSite, str, dict[str, int]], Visit],
    sites: tuple[HostSite, HostSite],
    embed_server: CitewallServer,
    screenshot: Callable[[Any, str], None],
) -> None:
    host = sites[0]
    seen = visit(host, "mia", DESKTOP)
    page = seen.page
    frame, session = load_chat(seen)
    assert session["role"] == "member" and session["name"].startswith("mia-")
    expect(frame.get_by_role("textbox", name="Access token")).to_have_count(0)
    expect(frame.get_by_role("navigation")).to_have_count(0)  # no app header, no admin pages

    # -- ask: prose without markers, external sources only -------------------------------------
    result = ask(frame, QUESTION)
    final = json.loads(sse_events(result.stream_body)[-1][1])
    assert final["sources"], "the demo question should cite an external source"
    assert not re.search(r"\[\d+\]", result.answer_text)
    assert chip_titles(frame) == [s["title"] for s in final["sources"]]
    kb_urls = {normalised(u, page) for u in embed_server.external_urls}
    frame.locator(".chip").first.click()
    link = frame.get_by_role("dialog").locator("a.source-link")
    assert link.get_attribute("href") in kb_urls
    expect(link).to_have_attribute("target", "_blank")
    frame.get_by_role("dialog").press("Escape")
    conversation = final["conversation_id"]
    assert page.evaluate("sessionStorage.getItem('citewall.conversation')") == conversation
    answers = frame.locator("li.turn-assistant [data-testid=answer]").all_inner_texts()
    screenshot(page, "embed-desktop")

    # -- reload the host page: the same conversation, from history -----------------------------
    frame, session = load_chat(seen, reload=True)
    expect(frame.locator("li.turn")).to_have_count(2)
    assert frame.locator("li.turn-user .question").all_inner_texts() == [QUESTION]
    assert frame.locator("li.turn-assistant [data-testid=answer]").all_inner_texts() == answers
    assert chip_titles(frame) == [s["title"] for s in final["sources"]]
    followed = json.loads(sse_events(ask(frame, FOLLOW_UP).stream_body)[-1][1])
    assert followed["conversation_id"] == conversation

    # -- New conversation: the host forgets the old one ----------------------------------------
    frame.get_by_role("button", name="New conversation").click()
    expect(frame.locator("li.turn")).to_have_count(0)
    expect(frame.get_by_label("Your question")).to_be_focused()
    wait_until(page, "sessionStorage.getItem('citewall.conversation') === null")

    # -- no citewall cookie, no citewall token on the host's side or in a URL ------------------
    assert host.token_requests == ["mia", "mia"]
    assert seen.cookies_set == []
    assert not any(c["domain"] == "127.0.0.1" for c in page.context.cookies())
    # The API saw citewall session tokens only, never the host's JWT.
    assert seen.authorizations and all(CITEWALL_TOKEN.fullmatch(a[7:]) for a in seen.authorizations)
    assert_no_token_reaches_the_host(seen, frame, session)
    assert seen.traps.page_errors == [] and seen.traps.csp_violations == []


def test_the_embedded_chat_offers_a_person_after_not_found(
    visit: Callable[[HostSite, str, dict[str, int]], Visit],
    sites: tuple[HostSite, HostSite],
    helpdesk: Receiver,
) -> None:
    seen = visit(sites[0], "olu", DESKTOP)
    frame, session = load_chat(seen)
    assert session["handoff"] is True
    # An answer from the knowledge base: the action is there, not offered on its own.
    ask(frame, QUESTION)
    expect(frame.get_by_role("button", name="Talk to a person")).to_be_visible()
    expect(frame.locator(".handoff-offered")).to_have_count(0)
    # "Not found": offered on its own, with the line saying why, as in the member chat.
    final = json.loads(sse_events(ask(frame, UNCOVERED).stream_body)[-1][1])
    assert final["answer_status"] == "not_found", final
    offer = frame.locator(".handoff-offered")
    expect(offer).to_contain_text("A person from the team can pick this up.")
    offer.get_by_role("button", name="Talk to a person").click()
    form = frame.get_by_role("form", name="Talk to a person")
    form.get_by_label("Anything to add for them? (optional)").fill("From the help centre.")
    with seen.page.expect_response(lambda r: r.url.endswith("/handoff")) as sent:
        form.get_by_role("button", name="Send request").click()
    assert sent.value.status == 202, sent.value.text()
    expect(frame.get_by_role("status").filter(has_text="Request received")).to_be_visible()
    handoff_id = sent.value.json()["id"]
    for _ in range(120):  # the server's delivery loop polls every 0.5 s
        if handoff_id in helpdesk.accepted():
            break
        seen.page.wait_for_timeout(500)
    assert helpdesk.accepted().count(handoff_id) == 1
    (delivered,) = [r for r in helpdesk.received if r.verified and r.handoff_id == handoff_id]
    assert delivered.body["conversation_id"] == final["conversation_id"]
    assert delivered.body["message"] == "From the help centre."
    assert seen.traps.page_errors == [] and seen.traps.csp_violations == []


def assert_no_token_reaches_the_host(seen: Visit, chat: Frame, session: dict[str, Any]) -> None:
    """No citewall token in the host page, its storage, the messages it got, or any URL."""
    page = seen.page
    host_text = page.content() + json.dumps(page.evaluate("({...sessionStorage, ...localStorage})"))
    messages = "\n".join(page.evaluate("window.__hostMessages"))
    for where, text in (("host page", host_text), ("messages to the host", messages)):
        assert not CITEWALL_TOKEN.search(text), where
        assert session["token"] not in text, where
    assert all(m.startswith('{"type":"citewall:') for m in page.evaluate("window.__hostMessages"))
    assert not [u for u in seen.urls if CITEWALL_TOKEN.search(u) or "eyJ" in u]
    # With third-party cookies blocked the frame may not even read its storage.
    stored = chat.evaluate(
        "(() => { try { return JSON.stringify({...sessionStorage, ...localStorage}); }"
        " catch { return 'no storage'; } })()"
    )
    assert not CITEWALL_TOKEN.search(stored), "the chat keeps its session in memory only"


def test_the_embedded_chat_works_on_a_phone(
    visit: Callable[[HostSite, str, dict[str, int]], Visit],
    sites: tuple[HostSite, HostSite],
    screenshot: Callable[[Any, str], None],
) -> None:
    seen = visit(sites[0], "rita", PHONE)
    frame, _ = load_chat(seen)
    ask(frame, QUESTION)
    expect(frame.locator(".chip").first).to_be_visible()
    expect(frame.get_by_role("button", name="New conversation")).to_be_visible()
    width = frame.evaluate("document.documentElement.clientWidth")
    assert 340 <= width <= PHONE["width"], width
    overflow = frame.evaluate("document.documentElement.scrollWidth - innerWidth")
    assert overflow <= 0, f"the chat is {overflow}px wider than a {width}px frame"
    used = frame.evaluate("document.querySelector('.chat').getBoundingClientRect().width")
    assert used >= width - 32, f"the chat uses {used}px of a {width}px frame"
    screenshot(seen.page, "embed-phone")
    assert seen.traps.page_errors == [] and seen.traps.csp_violations == []


def test_a_page_of_another_origin_cannot_frame_the_chat(
    visit: Callable[[HostSite, str, dict[str, int]], Visit], sites: tuple[HostSite, HostSite]
) -> None:
    stranger = sites[1]
    seen = visit(stranger, "mia", DESKTOP)
    page = seen.page
    refused = lambda m: "frame-ancestors" in m.text  # noqa: E731
    with page.expect_console_message(refused, timeout=30_000):
        page.goto(f"{stranger.origin}/login?as=mia")
    page.wait_for_timeout(1000)
    handle = page.locator("#citewall-chat iframe").element_handle()
    frame = handle.content_frame() if handle else None
    assert frame is not None and not frame.url.startswith(stranger.citewall_url), frame.url
    # The chat never loaded, so it never asked the stranger's page for a token.
    assert stranger.token_requests == []
    assert not any(u.endswith(SESSION_PATH) for u in seen.urls)


def test_a_session_that_ends_is_renewed_with_a_fresh_host_token_once(
    visit: Callable[[HostSite, str, dict[str, int]], Visit],
    sites: tuple[HostSite, HostSite],
    embed_server: CitewallServer,
) -> None:
    host = sites[0]
    seen = visit(host, "noor", DESKTOP)
    frame, session = load_chat(seen)
    asked = len(host.token_requests)
    # The session is revoked: the next question gets a 401, the chat asks the host for a fresh
    # token, signs in again and the question goes through.
    gone = httpx.delete(
        embed_server.base_url + SESSION_PATH,
        headers={"Authorization": f"Bearer {session['token']}"},
        timeout=30,
    )
    assert gone.status_code == 204, gone.text
    with seen.page.expect_response(is_session_post, timeout=30_000) as renewed:
        ask(frame, QUESTION)
    assert renewed.value.status == 201
    assert len(host.token_requests) == asked + 1

    # The member is revoked in citewall: the fresh host token is refused too, and the chat says
    # the session has ended.
    revoke = subprocess.run(
        [CITEWALL, "users", "revoke", session["name"]],
        env=embed_server.env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert revoke.returncode == 0, revoke.stderr
    box = frame.get_by_label("Your question")
    box.fill(FOLLOW_UP)
    box.press("Enter")
    expect(frame.get_by_role("alert")).to_contain_text("Your session has ended", timeout=30_000)
    assert len(host.token_requests) == asked + 2
