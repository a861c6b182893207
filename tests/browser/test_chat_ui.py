"""The member chat page in Chromium against a real `citewall serve` whose model is a scripted
OpenAI-compatible server (`evals/citewall_evals/llm_server.py`): answers as long and as slow as a
test needs, and a model failure on demand. Phone (390x844) and desktop (1280x800) sizes.

Each test of a defect of issue 15 says which one in its docstring; each failed against the
build before the fix.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from citewall_evals.llm_server import Reply, ScriptedOpenAIServer

from .conftest import CITEWALL, REPO_ROOT, CitewallServer, api, start_server, stop_server
from .ui import ANSWER_TIMEOUT_MS, BrowserTraps, ask, install_recorders, sign_in, wait_until

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}

#: Questions the demo KB covers (retrieval finds cards for the scripted answer to cite).
LABEL_QUESTION = "How do I create my first shipping label?"
VOID_QUESTION = "Can I void a label I did not use?"
#: Asking for detail gets a long answer (taller than a phone screen).
DETAIL = " Please explain in detail."
#: Asking slowly gets a long answer that takes seconds to stream.
SLOWLY = " Please explain slowly."

SHORT_ANSWER = (
    "Open an order and click Buy label [1]. The label PDF opens in a new tab and the tracking "
    "number is written back to the order [1]."
)
LONG_ANSWER = "\n\n".join(
    f"Step {i}: open the order, check the weight and the package dimensions, pick a carrier "
    f"and a service, then confirm; the label and its tracking number follow [1]."
    for i in range(1, 13)
)
EXAMPLES = [LABEL_QUESTION, "How long do refunds take?"]
QUESTION_RE = re.compile(r"Question: (.*?)\n\nAnswer using", re.S)


class ScriptedModel:
    """What the model answers, by question: short, long, or long and slow; and a failure for
    each question in ``fail_once`` the first time it is asked."""

    def __init__(self) -> None:
        self.fail_once: set[str] = set()

    def __call__(self, body: dict[str, Any]) -> Reply:
        match = QUESTION_RE.search(str(body["messages"][-1]["content"]))
        question = match.group(1) if match else ""
        if question in self.fail_once:
            self.fail_once.discard(question)
            return Reply(status=500)
        if SLOWLY.strip() in question:
            return streamed(LONG_ANSWER, 0.15)
        if DETAIL.strip() in question:
            return streamed(LONG_ANSWER, 0.02)
        return streamed(SHORT_ANSWER, 0.02)


def streamed(text: str, delay_s: float) -> Reply:
    """``text`` as the model's reply: in 40-character deltas ``delay_s`` apart when streamed."""
    parts = [text[i : i + 40] for i in range(0, len(text), 40)]
    return Reply(text=text, chunks=parts, chunk_delay_s=delay_s)


@pytest.fixture(scope="module")
def model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture(scope="module")
def chat_server(
    tmp_path_factory: pytest.TempPathFactory, demo_kb: Any, model: ScriptedModel
) -> Iterator[CitewallServer]:
    """citewall on the demo KB, answering through the scripted model; no reranker, so answers
    take the `rrf_only` path (sources without a relevance score)."""
    with ScriptedOpenAIServer(responder=model) as llm:
        server = start_server(
            tmp_path_factory.mktemp("chat-ui"),
            [demo_kb],
            {"mia": "member", "ada": "admin", "rita": "member", "noor": "member"},
            {
                "CITEWALL_GENERATOR": "openai",
                "CITEWALL_OPENAI_BASE_URL": llm.base_url,
                "CITEWALL_OPENAI_RETRIES": "0",
                "CITEWALL_RERANKER_ENABLED": "false",
                # One model call per question (no follow-up rewriting call).
                "CITEWALL_CONVERSATION_CONTEXT": "false",
                "CITEWALL_EXAMPLE_QUESTIONS": json.dumps(EXAMPLES),
            },
        )
        try:
            yield server
        finally:
            stop_server(server)


@pytest.fixture
def open_page(browser: Browser) -> Iterator[Callable[[dict[str, int]], Page]]:
    """New pages at a given viewport, each in its own context with the stream recorders."""
    contexts = []

    def make(viewport: dict[str, int]) -> Page:
        ctx = browser.new_context(viewport=viewport, is_mobile=viewport["width"] < 500)
        install_recorders(ctx)
        contexts.append(ctx)
        return ctx.new_page()

    yield make
    for ctx in contexts:
        ctx.close()


# -- scroll geometry -------------------------------------------------------------------------


def distance_to_end(page: Page) -> float:
    return float(
        page.evaluate(
            "() => { const s = document.scrollingElement;"
            " return s.scrollHeight - s.scrollTop - s.clientHeight; }"
        )
    )


def scroll_top(page: Page) -> float:
    return float(page.evaluate("document.scrollingElement.scrollTop"))


AT_END = (
    "(() => { const s = document.scrollingElement;"
    " return s.scrollHeight - s.scrollTop - s.clientHeight <= 30; })()"
)


def assert_latest_answer_in_view(page: Page) -> None:
    """The newest answer's end is on screen, above the question box (not below the fold)."""
    turn = page.locator("li.turn-assistant").last.bounding_box()
    dock = page.locator("form.composer").bounding_box()
    assert turn is not None and dock is not None
    bottom = turn["y"] + turn["height"]
    assert bottom <= dock["y"] + 1, f"the answer ends at {bottom:.0f}px, below {dock['y']:.0f}px"
    assert bottom > 0, "the answer is above the screen"


# -- defect 1: following the answer -----------------------------------------------------------


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_each_new_answer_is_scrolled_into_view(
    open_page: Callable[[dict[str, int]], Page],
    chat_server: CitewallServer,
    viewport: dict[str, int],
    screenshot: Callable[[Any, str], None],
) -> None:
    """Defect 1: a new answer landed below the fold and nothing scrolled to it (a phone after
    the 2nd question, a desktop once the conversation is taller than the window)."""
    page = open_page(viewport)
    sign_in(page, chat_server.base_url, chat_server.tokens["mia"])
    for question in (LABEL_QUESTION + DETAIL, VOID_QUESTION + DETAIL, LABEL_QUESTION + DETAIL):
        ask(page, question)
        assert_latest_answer_in_view(page)
        assert distance_to_end(page) <= 30
    assert scroll_top(page) > 0
    expect(page.get_by_role("button", name="Jump to latest")).to_have_count(0)
    screenshot(page, f"chat-follow-{viewport['width']}")


def test_reader_who_scrolls_up_stays_put_and_can_jump_to_latest(
    open_page: Callable[[dict[str, int]], Page], chat_server: CitewallServer
) -> None:
    """Defect 1: follow the answer while it streams unless the reader scrolled up; show a
    "Jump to latest" control then."""
    page = open_page(DESKTOP)
    sign_in(page, chat_server.base_url, chat_server.tokens["mia"])
    ask(page, LABEL_QUESTION + DETAIL)
    box = page.get_by_label("Your question")
    box.fill(VOID_QUESTION + SLOWLY)
    box.press("Enter")
    streaming = page.locator('li.turn-assistant[aria-busy="true"]')
    expect(streaming).to_have_count(1)
    expect(streaming.locator(".markdown")).to_contain_text("Step 2")
    page.mouse.move(640, 300)
    page.mouse.wheel(0, -5000)
    wait_until(page, "document.scrollingElement.scrollTop < 50")
    jump = page.get_by_role("button", name="Jump to latest")
    expect(jump).to_be_visible()
    # More of the answer streams in; the reader is not pulled down to it.
    expect(streaming.locator(".markdown")).to_contain_text("Step 6", timeout=ANSWER_TIMEOUT_MS)
    assert scroll_top(page) < 50
    expect(streaming).to_have_count(0, timeout=ANSWER_TIMEOUT_MS)
    assert scroll_top(page) < 50
    jump.click()
    wait_until(page, AT_END)
    assert_latest_answer_in_view(page)
    expect(jump).to_have_count(0)


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_reopened_long_conversation_starts_at_the_bottom(
    open_page: Callable[[dict[str, int]], Page],
    chat_server: CitewallServer,
    viewport: dict[str, int],
) -> None:
    """Defect 1: a reopened long conversation started at the top."""
    conversation_id = None
    for question in (LABEL_QUESTION + DETAIL, VOID_QUESTION + DETAIL, LABEL_QUESTION + DETAIL):
        reply = api(
            chat_server,
            "noor",
            "POST",
            "/api/v1/chat",
            json={"message": question, "conversation_id": conversation_id},
        )
        conversation_id = reply["conversation_id"]
    page = open_page(viewport)
    sign_in(page, chat_server.base_url, chat_server.tokens["noor"], path=f"/c/{conversation_id}")
    expect(page.locator("li.turn-assistant")).to_have_count(3)
    wait_until(page, f"document.scrollingElement.scrollTop > 0 && {AT_END}")
    assert_latest_answer_in_view(page)
    expect(page.get_by_role("button", name="Jump to latest")).to_have_count(0)


# -- defect 2: errors ---------------------------------------------------------------------------

#: Server wording a member must never read.
RAW_ERRORS = re.compile(
    r"Internal Server Error|Failed to fetch|rate limit exceeded|generator|HTTP \d{3}|"
    r"NetworkError|detail",
    re.I,
)


def failed_turn(page: Page) -> Any:
    return page.locator("li.turn-assistant").filter(has=page.locator(".turn-error")).last


def test_failed_first_question_keeps_it_offers_retry_and_sets_no_title(
    open_page: Callable[[dict[str, int]], Page],
    chat_server: CitewallServer,
    model: ScriptedModel,
) -> None:
    """Defect 2: errors were raw server strings with no Retry, the composer was already
    cleared, and a failed first question set the conversation title (the next overwrote it)."""
    page = open_page(PHONE)
    traps = BrowserTraps().attach(page)
    sign_in(page, chat_server.base_url, chat_server.tokens["rita"])
    first = "Where do I change the ship-from address for labels?"
    model.fail_once.add(first)
    box = page.get_by_label("Your question")
    box.fill(first)
    box.press("Enter")
    turn = failed_turn(page)
    expect(turn.get_by_role("alert")).to_contain_text("Nothing was saved", timeout=30_000)
    assert not RAW_ERRORS.search(turn.inner_text()), turn.inner_text()
    expect(turn.get_by_role("button", name="Retry")).to_be_visible()
    # The question is back in the box; the conversation was not created: no title, no URL.
    expect(box).to_have_value(first)
    expect(page.get_by_role("heading", level=1)).to_have_text("New conversation")
    expect(page).to_have_url(chat_server.base_url + "/")
    assert api(chat_server, "rita", "GET", "/api/v1/conversations") == []

    # A different question next: it opens the conversation and names it.
    box.fill(LABEL_QUESTION)
    box.press("Enter")
    expect(page.locator("li.turn-assistant")).to_have_count(1)
    expect(page.locator("li.turn-assistant")).to_have_attribute(
        "aria-busy", "false", timeout=ANSWER_TIMEOUT_MS
    )
    expect(page.locator(".turn-error")).to_have_count(0)
    expect(page.locator("li.turn-user .question")).to_have_text([LABEL_QUESTION])
    expect(page.get_by_role("heading", level=1)).to_have_text(LABEL_QUESTION)
    expect(page).to_have_url(re.compile(r"/c/[\w-]+$"))
    stored = api(chat_server, "rita", "GET", "/api/v1/conversations")
    assert [c["title"] for c in stored] == [LABEL_QUESTION]
    expect(page.locator(".conversation-item .conversation-title")).to_have_text([LABEL_QUESTION])

    # A failure in an existing conversation: Retry sends the same question once more.
    model.fail_once.add(VOID_QUESTION)
    box.fill(VOID_QUESTION)
    box.press("Enter")
    turn = failed_turn(page)
    expect(turn.get_by_role("button", name="Retry")).to_be_visible(timeout=30_000)
    expect(box).to_have_value(VOID_QUESTION)
    turn.get_by_role("button", name="Retry").click()
    expect(page.locator("li.turn-assistant").last).to_have_attribute(
        "aria-busy", "false", timeout=ANSWER_TIMEOUT_MS
    )
    expect(page.locator(".turn-error")).to_have_count(0)
    expect(page.locator("li.turn-user .question")).to_have_text([LABEL_QUESTION, VOID_QUESTION])
    expect(box).to_have_value("")
    conversation = api(chat_server, "rita", "GET", f"/api/v1/conversations/{stored[0]['id']}")
    assert [m["content"] for m in conversation["messages"] if m["role"] == "user"] == [
        LABEL_QUESTION,
        VOID_QUESTION,
    ]
    assert conversation["title"] == LABEL_QUESTION
    assert traps.page_errors == [] and traps.csp_violations == []


def test_busy_and_unreachable_server_say_so_in_plain_words_with_retry(
    open_page: Callable[[dict[str, int]], Page], chat_server: CitewallServer
) -> None:
    """Defect 2: "rate limit exceeded" and "Failed to fetch" were shown as they came, with no
    Retry; a server unreachable at sign-in offered only "Sign out"."""
    page = open_page(DESKTOP)
    sign_in(page, chat_server.base_url, chat_server.tokens["mia"])
    box = page.get_by_label("Your question")
    stream = re.compile(r".*/api/v1/chat/stream$")

    page.route(
        stream,
        lambda route: route.fulfill(
            status=429, json={"detail": "rate limit exceeded"}, headers={"Retry-After": "5"}
        ),
    )
    box.fill(LABEL_QUESTION)
    box.press("Enter")
    turn = failed_turn(page)
    expect(turn.get_by_role("alert")).to_contain_text("Too many questions")
    assert not RAW_ERRORS.search(turn.inner_text()), turn.inner_text()
    page.unroute(stream)
    turn.get_by_role("button", name="Retry").click()
    expect(page.locator("li.turn-assistant").last).to_have_attribute(
        "aria-busy", "false", timeout=ANSWER_TIMEOUT_MS
    )
    expect(page.locator(".turn-error")).to_have_count(0)

    page.route(stream, lambda route: route.abort("connectionrefused"))
    box.fill(VOID_QUESTION)
    box.press("Enter")
    turn = failed_turn(page)
    expect(turn.get_by_role("alert")).to_contain_text("Could not reach citewall")
    assert not RAW_ERRORS.search(turn.inner_text()), turn.inner_text()
    expect(turn.get_by_role("button", name="Retry")).to_be_visible()
    expect(box).to_have_value(VOID_QUESTION)
    page.unroute(stream)

    # Unreachable at the start of a visit: Retry, not only "Sign out".
    me = re.compile(r".*/api/v1/me$")
    page.route(me, lambda route: route.abort("connectionrefused"))
    page.reload()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Could not reach citewall")
    assert not RAW_ERRORS.search(alert.inner_text()), alert.inner_text()
    page.unroute(me)
    page.get_by_role("button", name="Retry").click()
    expect(page.get_by_label("Your question")).to_be_visible()


def test_token_revoked_mid_session_signs_the_member_out_with_a_message(
    open_page: Callable[[dict[str, int]], Page], chat_server: CitewallServer
) -> None:
    """Defect 2: a 401 mid-session left the member signed in."""
    token = (
        subprocess.run(
            [CITEWALL, "users", "add", "ravi", "--role", "member"],
            env=chat_server.env,
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    page = open_page(DESKTOP)
    sign_in(page, chat_server.base_url, token)
    ask(page, LABEL_QUESTION)
    subprocess.run(
        [CITEWALL, "users", "revoke", "ravi"],
        env=chat_server.env,
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
    )
    box = page.get_by_label("Your question")
    box.fill(VOID_QUESTION)
    box.press("Enter")
    expect(page.get_by_label("Access token")).to_be_visible()
    expect(page.get_by_role("alert")).to_have_text(
        "Your session has ended. Sign in again to continue."
    )
    assert page.evaluate("sessionStorage.length") == 0


# -- defect 5 (second half): an unknown conversation --------------------------------------------


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_unknown_conversation_says_so_and_disables_the_composer(
    open_page: Callable[[dict[str, int]], Page],
    chat_server: CitewallServer,
    viewport: dict[str, int],
) -> None:
    """Defect 5 (second half): an unknown conversation left the composer enabled (a second
    404 on send)."""
    page = open_page(viewport)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url) if "/chat/stream" in r.url else None)
    sign_in(page, chat_server.base_url, chat_server.tokens["mia"], path="/c/no-such-conversation")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("does not exist")
    assert "404" not in alert.inner_text()
    expect(page.get_by_role("heading", level=1)).to_have_text("Conversation not found")
    box = page.get_by_label("Your question")
    expect(box).to_be_disabled()
    expect(page.get_by_role("button", name="Send")).to_be_disabled()
    assert requests == []
    page.get_by_role("button", name="Start a new conversation").click()
    expect(page).to_have_url(chat_server.base_url + "/")
    expect(box).to_be_enabled()
    expect(page.get_by_role("heading", level=1)).to_have_text("New conversation")


# -- defect 6: plain words for members, the path for admins -------------------------------------

JARGON = re.compile(r"rrf_only|dense_only|rerank|hybrid|fused", re.I)


def test_members_read_plain_words_about_relevance_admins_keep_the_path(
    open_page: Callable[[dict[str, int]], Page], chat_server: CitewallServer
) -> None:
    """Defect 6: members saw "this answer used rrf_only (fused keyword and semantic search,
    not reranked)"; admins keep the path label."""
    page = open_page(DESKTOP)
    sign_in(page, chat_server.base_url, chat_server.tokens["mia"])
    ask(page, LABEL_QUESTION)
    turn = page.locator("li.turn-assistant").last
    turn.locator(".chip").first.click()
    dialog = page.get_by_role("dialog")
    hint = dialog.locator(".relevance-hint")
    expect(hint).to_contain_text("No relevance score for this answer")
    assert not JARGON.search(dialog.inner_text()), dialog.inner_text()
    assert not JARGON.search(page.locator("#main").inner_text())

    admin = open_page(DESKTOP)
    sign_in(admin, chat_server.base_url, chat_server.tokens["ada"])
    ask(admin, LABEL_QUESTION)
    admin.locator("li.turn-assistant .chip").first.click()
    expect(admin.get_by_role("dialog").locator(".relevance-hint")).to_contain_text(
        "Retrieval path: rrf_only."
    )


# -- defect 10: copying an answer ---------------------------------------------------------------


def test_copying_an_answer_copies_its_prose_only(
    browser: Browser, chat_server: CitewallServer
) -> None:
    """Defect 10: copying an answer included the hidden text ": show source details"."""
    ctx = browser.new_context(viewport=DESKTOP)
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=chat_server.base_url)
    install_recorders(ctx)
    try:
        page = ctx.new_page()
        sign_in(page, chat_server.base_url, chat_server.tokens["mia"])
        ask(page, LABEL_QUESTION)
        turn = page.locator("li.turn-assistant").last
        turn.locator(".chip").first.click()  # the popover's link text is there too
        expect(page.get_by_role("dialog")).to_be_visible()
        # Select the whole answer, its sources and the open popover, and copy it.
        turn.evaluate(
            """li => { const range = document.createRange(); range.selectNodeContents(li);
                       const s = getSelection(); s.removeAllRanges(); s.addRange(range); }"""
        )
        page.keyboard.press("Control+c")
        copied = page.evaluate("navigator.clipboard.readText()")
        assert "Open an order and click Buy label." in copied, copied
        for hidden in ("show source details", "(opens in a new tab)"):
            assert hidden not in copied, copied
        page.keyboard.press("Escape")

        # The Copy button: the answer's prose, without markers or anything else.
        page.evaluate("navigator.clipboard.writeText('')")
        turn.get_by_role("button", name="Copy answer").click()
        expect(turn.get_by_role("status").filter(has_text="Copied")).to_be_visible()
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied == re.sub(r" \[\d+\]", "", SHORT_ANSWER), copied
    finally:
        ctx.close()


# -- features: stop, regenerate, feedback, examples, not found ----------------------------------


def stored_conversation(server: CitewallServer, user: str, page: Page) -> dict[str, Any]:
    conversation_id = page.url.rsplit("/c/", 1)[1]
    return dict(api(server, user, "GET", f"/api/v1/conversations/{conversation_id}"))


def test_stop_keeps_the_partial_answer_marked_stopped_and_reload_shows_it(
    open_page: Callable[[dict[str, int]], Page],
    chat_server: CitewallServer,
    screenshot: Callable[[Any, str], None],
) -> None:
    """Stop aborts the stream; the answer keeps what was said, marked stopped; the server
    stored it (the new conversation exists, a reload shows it); it can be rated and
    regenerated."""
    page = open_page(DESKTOP)
    traps = BrowserTraps().attach(page)
    sign_in(page, chat_server.base_url, chat_server.tokens["mia"])
    box = page.get_by_label("Your question")
    box.fill(LABEL_QUESTION + SLOWLY)
    box.press("Enter")
    turn = page.locator("li.turn-assistant").last
    expect(turn.locator(".markdown")).to_contain_text("Step 2", timeout=ANSWER_TIMEOUT_MS)
    page.get_by_role("button", name="Stop answering").focus()
    page.keyboard.press("Enter")
    expect(turn).to_have_attribute("aria-busy", "false")
    expect(turn.get_by_test_id("answer-status")).to_have_text("Stopped")
    expect(turn).to_be_focused()  # the Stop button went away; focus is on what it stopped
    shown = turn.locator("[data-testid=answer]").inner_text()
    assert "Step 2" in shown and "Step 12" not in shown, shown
    expect(page.get_by_role("button", name="Send")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/c/[\w-]+$"))
    expect(page.get_by_role("heading", level=1)).to_have_text(LABEL_QUESTION + SLOWLY)
    # Read back from the server: the stored answer can be rated (still the focused element).
    expect(turn.get_by_role("button", name="Helpful", exact=True)).to_be_visible()
    expect(turn).to_be_focused()
    stored = stored_conversation(chat_server, "mia", page)
    assert [m["answer_status"] for m in stored["messages"]] == [None, "stopped"]
    assert "Step 12" not in stored["messages"][1]["content"]
    screenshot(page, "chat-stopped-1280")

    page.reload()
    turn = page.locator("li.turn-assistant").last
    expect(turn.get_by_test_id("answer-status")).to_have_text("Stopped")
    expect(turn.locator("[data-testid=answer]")).to_contain_text("Step 1")

    # Regenerate answers the stopped question again.
    turn.get_by_role("button", name="Regenerate answer").click()
    expect(page.locator("li.turn-assistant")).to_have_count(2)
    page.get_by_role("button", name="Stop answering").click()
    expect(page.locator("li.turn-assistant").last).to_have_attribute("aria-busy", "false")
    assert traps.page_errors == [] and traps.csp_violations == []


def test_leaving_a_streaming_answer_stops_it(
    open_page: Callable[[dict[str, int]], Page], chat_server: CitewallServer
) -> None:
    """Opening a new conversation while an answer streams aborts its fetch: the server
    stores what was said as a stopped answer, and the list shows that conversation."""
    page = open_page(DESKTOP)
    sign_in(page, chat_server.base_url, chat_server.tokens["noor"])
    before = len(api(chat_server, "noor", "GET", "/api/v1/conversations"))
    question = VOID_QUESTION + SLOWLY
    box = page.get_by_label("Your question")
    box.fill(question)
    box.press("Enter")
    expect(page.locator("li.turn-assistant .markdown")).to_contain_text(
        "Step 1", timeout=ANSWER_TIMEOUT_MS
    )
    page.get_by_role("button", name="New conversation").click()
    expect(page.locator("li.turn")).to_have_count(0)
    expect(page.get_by_role("heading", level=1)).to_have_text("New conversation")
    expect(page.get_by_role("button", name="Send")).to_be_visible()
    expect(page.locator(".conversation-title").filter(has_text=question)).to_have_count(1)
    listed = api(chat_server, "noor", "GET", "/api/v1/conversations")
    assert len(listed) == before + 1
    stored = api(chat_server, "noor", "GET", f"/api/v1/conversations/{listed[0]['id']}")
    assert [m["answer_status"] for m in stored["messages"]] == [None, "stopped"]


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_regenerate_adds_a_new_answer_and_keeps_the_earlier_one(
    open_page: Callable[[dict[str, int]], Page],
    chat_server: CitewallServer,
    viewport: dict[str, int],
    screenshot: Callable[[Any, str], None],
) -> None:
    page = open_page(viewport)
    sign_in(page, chat_server.base_url, chat_server.tokens["mia"])
    ask(page, LABEL_QUESTION)
    first = page.locator("li.turn-assistant").first
    first.get_by_role("button", name="Regenerate answer").click()
    answers = page.locator("li.turn-assistant")
    expect(answers).to_have_count(2)
    expect(answers.last).to_have_attribute("aria-busy", "false", timeout=ANSWER_TIMEOUT_MS)
    expect(page.locator(".turn-error")).to_have_count(0)
    # The earlier answer stays, folded away; only the newest offers Regenerate.
    expect(answers.first.locator("summary")).to_contain_text("Earlier answer")
    expect(page.get_by_role("button", name="Regenerate answer")).to_have_count(1)
    expect(page.locator("li.turn-user")).to_have_count(1)
    assert_latest_answer_in_view(page)
    stored = stored_conversation(chat_server, "mia", page)
    roles = [m["role"] for m in stored["messages"]]
    assert roles == ["user", "assistant", "assistant"], roles
    assert stored["messages"][2]["regenerated_from"] == stored["messages"][1]["id"]
    screenshot(page, f"chat-regenerated-{viewport['width']}")

    page.reload()
    expect(page.locator("li.turn-assistant")).to_have_count(2)
    expect(page.locator("li.turn-assistant").first.locator("summary")).to_contain_text(
        "Earlier answer"
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_thumbs_and_an_optional_comment_are_stored(
    open_page: Callable[[dict[str, int]], Page],
    chat_server: CitewallServer,
    viewport: dict[str, int],
    screenshot: Callable[[Any, str], None],
) -> None:
    page = open_page(viewport)
    sign_in(page, chat_server.base_url, chat_server.tokens["mia"])
    ask(page, VOID_QUESTION)
    turn = page.locator("li.turn-assistant").last
    helpful = turn.get_by_role("button", name="Helpful", exact=True)
    not_helpful = turn.get_by_role("button", name="Not helpful")
    expect(helpful).to_have_attribute("aria-pressed", "false")

    helpful.click()
    expect(helpful).to_have_attribute("aria-pressed", "true")
    expect(turn.get_by_role("status").filter(has_text="Thanks")).to_be_visible()
    answer_id = stored_conversation(chat_server, "mia", page)["messages"][1]["id"]

    # Not helpful opens the comment box at once, focused.
    not_helpful.click()
    expect(not_helpful).to_have_attribute("aria-pressed", "true")
    comment = turn.get_by_label("What was wrong? (optional)")
    expect(comment).to_be_focused()
    comment.fill("It does not say which carriers allow 28 days.")
    screenshot(page, f"chat-feedback-{viewport['width']}")
    turn.get_by_role("button", name="Send feedback").click()
    expect(turn.get_by_role("status").filter(has_text="comment was saved")).to_be_visible()
    stored = stored_conversation(chat_server, "mia", page)["messages"][1]
    assert stored["id"] == answer_id
    assert stored["feedback"]["rating"] == "down"
    assert stored["feedback"]["comment"] == "It does not say which carriers allow 28 days."
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]

    page.reload()
    turn = page.locator("li.turn-assistant").last
    not_helpful = turn.get_by_role("button", name="Not helpful")
    expect(not_helpful).to_have_attribute("aria-pressed", "true")
    not_helpful.click()  # pressed again: withdrawn
    expect(not_helpful).to_have_attribute("aria-pressed", "false")
    expect(turn.get_by_role("status").filter(has_text="withdrawn")).to_be_visible()
    assert stored_conversation(chat_server, "mia", page)["messages"][1]["feedback"] is None


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_example_questions_on_an_empty_conversation(
    open_page: Callable[[dict[str, int]], Page],
    chat_server: CitewallServer,
    viewport: dict[str, int],
    screenshot: Callable[[Any, str], None],
) -> None:
    page = open_page(viewport)
    sign_in(page, chat_server.base_url, chat_server.tokens["mia"])
    examples = page.get_by_role("region", name="Try asking").get_by_role("button")
    expect(examples).to_have_text(EXAMPLES)
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    screenshot(page, f"chat-examples-{viewport['width']}")
    examples.first.click()
    expect(page.locator("li.turn-user .question")).to_have_text([EXAMPLES[0]])
    expect(page.locator("li.turn-assistant")).to_have_attribute(
        "aria-busy", "false", timeout=ANSWER_TIMEOUT_MS
    )
    expect(page.locator("li.turn-assistant .chip").first).to_be_visible()
    expect(page.get_by_role("region", name="Try asking")).to_have_count(0)
    expect(page.locator("li.turn-assistant")).to_be_focused()


def test_not_found_answer_suggests_rephrasing_without_sources(
    open_page: Callable[[dict[str, int]], Page], chat_server: CitewallServer
) -> None:
    page = open_page(PHONE)
    sign_in(page, chat_server.base_url, chat_server.tokens["mia"])
    # A question the KB does not cover (a greeting is small talk: no such label).
    ask(page, "What is the airspeed of an unladen swallow on Mars?")
    turn = page.locator("li.turn-assistant").last
    expect(turn.get_by_test_id("answer-status")).to_have_text(
        "Not answered from the knowledge base"
    )
    expect(turn.locator(".rephrase-hint")).to_contain_text("Try asking in other words")
    expect(turn.locator(".sources, .sources-none, .chip")).to_have_count(0)
    expect(turn.get_by_role("button", name="Helpful", exact=True)).to_be_visible()
