"""OpenAICompatGenerator against a real (scripted) OpenAI-compatible HTTP server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from citewall.errors import GenerationError
from citewall.generation.openai_compat import OpenAICompatGenerator
from citewall.retrieval.types import ContextChunk
from citewall_evals.llm_server import Reply, ScriptedOpenAIServer

CONTEXT = [
    ContextChunk(
        id="help-refunds",
        title="Refunds",
        text="Refunds take five business days.",
        source="https://help.example/refunds",
    ),
    ContextChunk(id="playbook-x", title="Secret playbook CWLEAKT-gen1", text="Escalate twice."),
]


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as s:
        yield s


def gen(server: ScriptedOpenAIServer, **kw: object) -> OpenAICompatGenerator:
    args: dict[str, object] = {
        "base_url": server.base_url,
        "model": "fake-model",
        "timeout_s": 2.0,
        "retries": 2,
        "backoff_s": 0.01,
    }
    args.update(kw)
    return OpenAICompatGenerator(**args)  # type: ignore[arg-type]


def test_non_streaming_reply_and_request_shape(server: ScriptedOpenAIServer) -> None:
    server.enqueue("Refunds take five days [1].")
    g = gen(server, api_key=SecretStr("sk-test"))
    reply = g.generate("How long do refunds take?", CONTEXT)
    assert reply.text == "Refunds take five days [1]."
    assert reply.generator == "openai:fake-model"
    (req,) = server.requests
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["Authorization"] == "Bearer sk-test"
    body = req["body"]
    assert body["model"] == "fake-model" and body["stream"] is False
    user = body["messages"][-1]["content"]
    assert "[1]" in user and "[2]" in user and "How long do refunds take?" in user
    # Titles and ids are never shown to the model.
    assert "CWLEAKT-gen1" not in str(body) and "playbook-x" not in str(body)


def test_streaming_yields_deltas_that_concatenate_to_the_reply(
    server: ScriptedOpenAIServer,
) -> None:
    server.enqueue(Reply(text="ignored", chunks=["Refunds ", "take five ", "days [1]."]))
    deltas = list(gen(server).stream("q", CONTEXT))
    assert deltas == ["Refunds ", "take five ", "days [1]."]
    assert server.chat_requests[0]["stream"] is True


def test_server_that_ignores_stream_flag_still_works(server: ScriptedOpenAIServer) -> None:
    server.responder = lambda body: Reply(
        body='{"choices": [{"message": {"content": "One JSON body [1]."}}]}'
    )
    assert "".join(gen(server).stream("q", CONTEXT)) == "One JSON body [1]."


def test_5xx_is_retried_then_succeeds(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(status=500), Reply(status=503), "Third time lucky [1].")
    assert gen(server).generate("q", CONTEXT).text == "Third time lucky [1]."
    assert len(server.chat_requests) == 3


def test_5xx_exhausts_retries_with_a_clear_error(server: ScriptedOpenAIServer) -> None:
    server.default = Reply(status=502, body="bad gateway")
    with pytest.raises(GenerationError, match=r"after 3 attempt\(s\): HTTP 502: bad gateway"):
        gen(server).generate("q", CONTEXT)
    assert len(server.chat_requests) == 3


def test_streaming_5xx_is_retried(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(status=500), Reply(chunks=["ok ", "[1]"]))
    assert "".join(gen(server).stream("q", CONTEXT)) == "ok [1]"


def test_4xx_is_not_retried(server: ScriptedOpenAIServer) -> None:
    server.default = Reply(status=401, body='{"error": "invalid api key"}')
    with pytest.raises(GenerationError, match="HTTP 401"):
        gen(server).generate("q", CONTEXT)
    assert len(server.chat_requests) == 1


def test_timeout_is_retried_then_reported(server: ScriptedOpenAIServer) -> None:
    server.default = Reply(text="too late", delay_s=3.0)
    g = gen(server, timeout_s=0.3, retries=1)
    with pytest.raises(GenerationError, match="timed out"):
        g.generate("q", CONTEXT)
    assert len(server.chat_requests) == 2


def test_hang_then_answer(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(text="late", delay_s=3.0), "On time [1].")
    assert gen(server, timeout_s=0.3).generate("q", CONTEXT).text == "On time [1]."


def test_connection_refused_is_a_generation_error() -> None:
    g = OpenAICompatGenerator(
        base_url="http://127.0.0.1:9/v1", model="m", timeout_s=0.5, retries=1, backoff_s=0.01
    )
    with pytest.raises(GenerationError, match="connection error"):
        g.generate("q", CONTEXT)


@pytest.mark.parametrize(
    "body",
    [
        "<html>oops</html>",
        "",
        "{}",
        '{"choices": []}',
        '{"choices": [{"message": {}}]}',
        '{"choices": [{"message": {"content": "   "}}]}',
        "null",
        "[1, 2]",
    ],
)
def test_garbage_or_empty_replies_raise(server: ScriptedOpenAIServer, body: str) -> None:
    server.default = Reply(body=body)
    with pytest.raises(GenerationError, match=r"not an OpenAI chat completion|no text"):
        gen(server).generate("q", CONTEXT)


def test_garbage_stream_events_raise(server: ScriptedOpenAIServer) -> None:
    server.default = Reply(
        body="data: {not json\n\ndata: [DONE]\n\n", content_type="text/event-stream"
    )
    with pytest.raises(GenerationError, match="unparseable event"):
        list(gen(server).stream("q", CONTEXT))


def test_empty_stream_raises(server: ScriptedOpenAIServer) -> None:
    server.default = Reply(chunks=[])
    with pytest.raises(GenerationError, match="empty reply"):
        list(gen(server).stream("q", CONTEXT))


def test_models_endpoint_of_the_fake(server: ScriptedOpenAIServer) -> None:
    import httpx

    r = httpx.get(server.base_url + "/models")
    assert r.json()["data"][0]["id"] == "fake-model"
