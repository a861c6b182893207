"""Fault: the OpenAI-compatible LLM endpoint times out, answers 5xx, or answers garbage.

Through the real API: chat answers a clear 502, the stream ends in an honest ``error`` event
(after any tokens already sent), nothing of the turn is stored, and the failure is counted.
The generator's own retry logic is unit-tested in tests/generation/test_openai_compat.py; this
checks what the member sees and what the database keeps.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from citewall_evals.llm_server import Reply, ScriptedOpenAIServer

from .rig import QUESTIONS, Rig, build_rig, table_counts, turn_integrity_problems
from .sse import sse_events

GEN_FAILED = "the answer generator failed; nothing was saved, please retry"
GOOD = "Void the label from the order page within 30 days [1]."

FAULTS: dict[str, Reply] = {
    "timeout": Reply(text=GOOD, delay_s=3.0),
    "http_500": Reply(status=500),
    "http_503_html": Reply(status=503, body="<html>Bad gateway</html>", content_type="text/html"),
    "garbage_200": Reply(body="<html>not json</html>", content_type="text/html"),
    "empty_choices": Reply(body='{"choices": []}'),
    "truncated_json": Reply(body='{"choices": [{"message": {"content": "Void'),
}
#: Streams that break after some tokens went out.
BROKEN_STREAMS: dict[str, Reply] = {
    "garbage_event": Reply(
        body='data: {"choices":[{"delta":{"content":"Void the label "}}]}\n\ndata: {oops\n\n',
        content_type="text/event-stream",
    ),
    "no_done_no_content": Reply(body="data: {}\n\n", content_type="text/event-stream"),
}


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(default=GOOD) as server:
        yield server


@pytest.fixture(scope="module")
def rig(
    tmp_path_factory: pytest.TempPathFactory, embedder: Any, llm: ScriptedOpenAIServer
) -> Iterator[Rig]:
    data_dir: Path = tmp_path_factory.mktemp("llm") / "data"
    rig = build_rig(
        data_dir,
        embedder,
        generator="openai",
        openai_base_url=llm.base_url,
        openai_timeout_s=0.5,
        openai_retries=1,
    )
    yield rig
    rig.close()


@pytest.mark.parametrize("fault", list(FAULTS))
def test_llm_fault_is_a_clear_502_and_nothing_is_stored(
    rig: Rig, llm: ScriptedOpenAIServer, fault: str
) -> None:
    before = table_counts(rig.runtime.engine)
    llm.default = FAULTS[fault]
    try:
        r = rig.chat(QUESTIONS[0])
        assert r.status_code == 502, r.text
        assert r.json() == {"detail": GEN_FAILED}
        s = rig.stream(QUESTIONS[0])
        assert s.status_code == 200
        events = sse_events(s.text)
        names = [e for e, _ in events]
        assert names[0] == "meta" and names[-1] == "error" and "final" not in names, names
        assert events[-1][1] == {"detail": GEN_FAILED}
        assert table_counts(rig.runtime.engine) == before, "a failed turn left rows behind"
    finally:
        llm.default = GOOD
    # The endpoint is healthy again: the next turn is whole.
    ok = rig.chat(QUESTIONS[0])
    assert ok.status_code == 200, ok.text
    assert "Void the label" in ok.json()["answer"] and "[1]" not in ok.json()["answer"]
    assert turn_integrity_problems(rig.runtime.engine) == []
    assert 'citewall_chat_errors_total{kind="GenerationError"}' in rig.client.get("/metrics").text


@pytest.mark.parametrize("fault", list(BROKEN_STREAMS))
def test_stream_breaking_midway_ends_in_an_error_event(
    rig: Rig, llm: ScriptedOpenAIServer, fault: str
) -> None:
    before = table_counts(rig.runtime.engine)
    llm.default = BROKEN_STREAMS[fault]
    try:
        s = rig.stream(QUESTIONS[1])
    finally:
        llm.default = GOOD
    events = sse_events(s.text)
    names = [e for e, _ in events]
    assert names[0] == "meta" and names[-1] == "error" and "final" not in names, names
    assert events[-1][1] == {"detail": GEN_FAILED}
    assert table_counts(rig.runtime.engine) == before
