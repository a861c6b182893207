"""The interactive API documentation in Chromium, with no network beyond the server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from playwright.sync_api import Page, Route, expect

from .conftest import CitewallServer
from .ui import BrowserTraps


def test_docs_render_every_operation_offline(
    page: Page, demo_server: CitewallServer, screenshot: Callable[[Any, str], None]
) -> None:
    schema = httpx.get(f"{demo_server.base_url}/openapi.json", timeout=30).json()
    # Swagger UI lists an operation once under each of its tags.
    blocks = sum(
        len(op.get("tags") or [None]) for ops in schema["paths"].values() for op in ops.values()
    )
    assert blocks >= 10

    outside: list[str] = []

    def only_the_server(route: Route) -> None:
        if route.request.url.startswith(demo_server.base_url + "/"):
            route.continue_()
        else:  # a CDN, a font host: as on a machine without internet
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_the_server)
    traps = BrowserTraps().attach(page)
    page.goto(f"{demo_server.base_url}/docs")
    expect(page.locator(".opblock")).to_have_count(blocks, timeout=30_000)
    expect(page.locator(".opblock-summary-path", has_text="/api/v1/chat/stream")).to_be_visible()
    expect(page.get_by_role("button", name="Authorize")).to_be_visible()  # the bearer scheme
    # An operation opens, with its parameters and responses.
    page.locator(".opblock-summary", has_text="/api/v1/search").first.click()
    expect(page.locator(".opblock.is-open .responses-table").first).to_be_visible()
    screenshot(page, "api-docs")
    assert outside == [], outside
    assert traps.csp_violations == [] and traps.page_errors == []
