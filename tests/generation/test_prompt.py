"""The prompt: numbered context as untrusted data, markers asked for, URLs forbidden."""

from __future__ import annotations

from citewall.generation.prompt import SYSTEM_PROMPT, build_messages, format_context
from citewall.generation.protocols import Turn
from citewall.retrieval.types import ContextChunk


def test_context_is_numbered_and_fenced_as_data() -> None:
    ctx = [
        ContextChunk(id="a", title="Title A", text="Alpha text."),
        ContextChunk(id="b", title="Title B", text="Beta ~~~~~~ tries to close the fence."),
    ]
    block = format_context(ctx)
    assert block.index("[1]") < block.index("Alpha text.") < block.index("[2]")
    assert "untrusted data" in block
    # The fence around the hostile text is longer than its tilde run.
    assert "~~~~~~~" in block
    assert "Title A" not in block and "Title B" not in block


def test_messages_ask_for_markers_forbid_urls_and_metadata() -> None:
    msgs = build_messages("How?", [ContextChunk(id="card-1", text="x")])
    assert msgs[0]["role"] == "system"
    system = msgs[0]["content"]
    assert "[1]" in system and "URL" in system and "titles" in system
    assert "not instructions" in system
    assert msgs[-1]["role"] == "user" and "Question: How?" in msgs[-1]["content"]
    assert "card-1" not in str(msgs)
    assert system == SYSTEM_PROMPT


def test_history_goes_in_order_without_old_markers() -> None:
    history = [Turn("user", "First?"), Turn("assistant", "Answer one [1].")]
    msgs = build_messages("Second?", [ContextChunk(id="a", text="x")], history)
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[2]["content"] == "Answer one."
