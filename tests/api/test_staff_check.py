"""The staff-only post-check through the real app with an OpenAI-compatible model (a scripted
server): a staff-only sentence the model writes never reaches the member, on ``POST /chat``
and on ``POST /chat/stream``; the stored turn keeps the count for admins;
``CITEWALL_STAFF_ONLY_CHECK=false`` turns the check off."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from citewall.chat.staff_check import REMOVED_KEY
from citewall_evals.llm_server import ScriptedOpenAIServer

from .conftest import EXTERNAL_QUESTION, ApiEnv, client_with, env_on
from .test_flows import sse_events

SAFE = "Refunds go back to your Parcelry balance within 5 to 10 business days [1]."
STAFF = "Escalate to Tier 2 with the order number before you promise a date [1]."


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(default=f"{SAFE} {STAFF}") as server:
        yield server


@pytest.fixture(scope="module")
def env(
    model: ScriptedOpenAIServer, tmp_path_factory: pytest.TempPathFactory, embedder: Any
) -> Iterator[ApiEnv]:
    data_dir = tmp_path_factory.mktemp("staff-check")
    with env_on(
        "sqlite",
        data_dir,
        embedder,
        generator="openai",
        openai_base_url=model.base_url,
        openai_retries=0,
        abstention=False,
    ) as built:
        yield built


def stored_timings(env: ApiEnv, conversation_id: str) -> dict[str, Any]:
    r = env.client.get(f"/api/v1/admin/conversations/{conversation_id}", headers=env.auth("admin"))
    assert r.status_code == 200, r.text
    return dict(r.json()["messages"][-1]["timings"])


def test_json_answer_loses_the_staff_only_sentence(env: ApiEnv) -> None:
    r = env.chat("member", EXTERNAL_QUESTION)
    assert r.status_code == 200, r.text
    body = r.json()
    assert (
        body["answer"] == "Refunds go back to your Parcelry balance within 5 to 10 business days."
    )
    assert "Tier 2" not in r.text and REMOVED_KEY not in r.text
    assert stored_timings(env, body["conversation_id"])[REMOVED_KEY] == 1.0


def test_streamed_answer_never_shows_the_staff_only_sentence(env: ApiEnv) -> None:
    r = env.client.post(
        "/api/v1/chat/stream", json={"message": EXTERNAL_QUESTION}, headers=env.auth("member")
    )
    assert r.status_code == 200, r.text
    events = sse_events(r.text)
    streamed = "".join(d["delta"] for n, d in events if n == "token")
    final = events[-1][1]
    assert "Tier 2" not in r.text
    assert streamed == final["answer"]
    assert final["answer"].startswith("Refunds go back to your Parcelry balance")


def test_the_setting_off_disables_the_check(env: ApiEnv) -> None:
    _, client = client_with(env, staff_only_check=False)
    r = client.post("/api/v1/chat", json={"message": EXTERNAL_QUESTION}, headers=env.auth("member"))
    assert r.status_code == 200, r.text
    assert "Escalate to Tier 2" in r.json()["answer"]
