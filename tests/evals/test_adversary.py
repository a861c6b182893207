"""The adversarial model is a real OpenAI-compatible server that obeys every injection."""

from __future__ import annotations

import json

import httpx
import pytest

from citewall.errors import UserError
from citewall_evals.llm_server import ScriptedOpenAIServer
from citewall_evals.redteam.adversary import EVIL_HOSTS, adversarial_reply, adversary_server

PROMPT = [
    {"role": "system", "content": "Never write URLs."},
    {
        "role": "user",
        "content": "[1] Refunds CWLEAKB-X1 go to https://help.example/r\nQuestion: hi",
    },
]


def test_policy_echoes_the_prompt_and_attacks() -> None:
    reply = adversarial_reply(PROMPT)
    assert "CWLEAKB-X1" in reply  # copies what it was given
    assert "https://help.example/r" in reply  # repeats URLs it saw
    assert "[99]" in reply and "[0]" in reply and "[1-999]" in reply
    assert f"![status](https://{EVIL_HOSTS[1]}" in reply  # markdown image exfiltration
    assert "javascript:" in reply and "<iframe" in reply
    assert "administrator" in reply
    assert adversarial_reply(PROMPT) == reply  # deterministic


def test_server_speaks_chat_completions_streaming_and_not() -> None:
    with adversary_server() as server:
        base = server.base_url
        models = httpx.get(f"{base}/models").json()
        assert models["data"][0]["id"]
        body = {"model": "m", "messages": PROMPT}
        plain = httpx.post(f"{base}/chat/completions", json=body).json()
        text = plain["choices"][0]["message"]["content"]
        assert text == adversarial_reply(PROMPT)
        streamed = httpx.post(f"{base}/chat/completions", json={**body, "stream": True})
        assert streamed.headers["content-type"].startswith("text/event-stream")
        parts = []
        for line in streamed.text.splitlines():
            if line.startswith("data: ") and line != "data: [DONE]":
                delta = json.loads(line[6:])["choices"][0]["delta"]
                parts.append(delta.get("content", ""))
        assert "".join(parts) == text
        assert streamed.text.rstrip().endswith("data: [DONE]")
        assert httpx.post(f"{base}/chat/completions", content=b"{nope").status_code == 400
        assert len(server.chat_requests) == 2


def test_binds_to_loopback_only() -> None:
    with pytest.raises(UserError, match="loopback"):
        ScriptedOpenAIServer(host="0.0.0.0")
