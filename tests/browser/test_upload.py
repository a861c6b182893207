"""Upload a document from the admin pages, end to end in Chromium: an admin uploads an internal
PDF on the Playbooks page, sees the run's counts and the document in the list; a member then
asks and the answer draws on the PDF in prose, never as a source; the admin removes it and the
member's answer no longer has it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from ingest.documents.files import pdf_bytes, write
from playwright.sync_api import BrowserContext, expect

from .conftest import CitewallServer, api, start_server, stop_server
from .ui import ask, sign_in, sse_events

STAFF = (
    "Cold chain desk. Refrigerated parcels are booked in Helm under queue CLD-4 by the desk "
    "lead, who checks the gel packs before pickup."
)
TELL = (
    "Refrigerated parcels with insulin must travel in the blue Frostbox with four gel packs "
    "and reach the customer within 36 hours."
)
QUESTION = "How must refrigerated parcels with insulin travel?"


@pytest.fixture(scope="module")
def upload_server(
    tmp_path_factory: pytest.TempPathFactory, demo_kb: Path
) -> Iterator[CitewallServer]:
    server = start_server(
        tmp_path_factory.mktemp("upload"),
        [demo_kb],
        {"mia": "member", "ada": "admin"},
        {"CITEWALL_GENERATOR": "extractive", "CITEWALL_CALIBRATION": "false"},
    )
    try:
        yield server
    finally:
        stop_server(server)


def _final(server: CitewallServer) -> dict[str, Any]:
    body = api(
        server, "mia", "POST", "/api/v1/chat", json={"message": QUESTION, "conversation_id": None}
    )
    return dict(body)


def test_an_uploaded_pdf_answers_a_member_until_it_is_removed(
    context: BrowserContext,
    upload_server: CitewallServer,
    tmp_path: Path,
    screenshot: Callable[[Any, str], None],
) -> None:
    server = upload_server
    pdf = write(
        tmp_path / "Cold Chain.pdf",
        pdf_bytes([STAFF, "Tell the member", TELL], title="Cold chain manual"),
    )
    admin = context.new_page()
    sign_in(admin, server.base_url, server.tokens["ada"], "/admin/playbooks")
    section = admin.get_by_test_id("upload-document")
    expect(section.get_by_role("heading", name="Upload a document")).to_be_visible()
    section.get_by_label("File").set_input_files(str(pdf))
    section.get_by_role("button", name="Upload").click()
    expect(section.get_by_test_id("upload-message")).to_contain_text("Uploaded cold-chain.pdf")
    expect(section.get_by_test_id("upload-run")).to_contain_text("added")
    expect(section.get_by_test_id("upload-run")).to_contain_text("0 refused")
    expect(section.locator(".uploads-table")).to_contain_text("cold-chain.pdf")
    screenshot(admin, "upload-document")

    member = context.new_page()
    sign_in(member, server.base_url, server.tokens["mia"])
    answered = ask(member, QUESTION)
    name, data = sse_events(answered.stream_body)[-1]
    assert name == "final", name
    final = json.loads(data)
    assert "Frostbox" in final["answer"], final["answer"]
    assert "CLD-4" not in final["answer"] and "Helm" not in final["answer"]
    assert "cold-chain" not in json.dumps(final["sources"])
    turn = member.locator("li.turn-assistant").last
    expect(turn.locator("[data-testid=answer]")).to_contain_text("Frostbox")

    # A file that is not a document is refused beside the file input; nothing is stored.
    notes = write(tmp_path / "notes.txt", "Not a document.")
    section.get_by_label("File").set_input_files(str(notes))
    section.get_by_role("button", name="Upload").click()
    expect(section.locator(".field-problem")).to_contain_text("is not a document")

    section.get_by_role("button", name="Remove cold-chain.pdf").click()
    # Removing asks first, naming the cards that go.
    section.get_by_role("button", name="Yes, remove").click()
    expect(section.get_by_test_id("upload-message")).to_contain_text("Removed cold-chain.pdf")
    expect(section).to_contain_text("No documents uploaded yet.")
    after = _final(server)
    assert "Frostbox" not in after["answer"], after["answer"]
