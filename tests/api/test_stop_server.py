"""Stop, end to end: a real ``citewall serve`` process, a scripted model that writes slowly, and
an httpx client that reads a few tokens and hangs up, as a browser's ``AbortController`` does.

The server must notice the closed connection and store the question with the prose the client
received as a ``stopped`` answer (sources reconciled to what that prose cites, retrieval events
and exposures), which a reload then shows; a client that hangs up before any prose leaves
nothing stored. The test polls (bounded) for what the server stores. SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pgdb import temporary_database

from citewall_evals.bench.server import Served, add_user, bench_env, citewall_cli, serving
from citewall_evals.llm_server import Reply, ScriptedOpenAIServer

from .conftest import EXTERNAL_QUESTION, KB_FILE, PG_ADMIN_URL
from .test_flows import MARKER

#: One sentence per model delta, 0.4 s apart. The first three cite context slots 1 and 2, the
#: rest slot 3: a stop after three sentences cites two cards, not the third.
SENTENCES = [
    "Refunds take five to ten business days [1].",
    " A voided label goes back to your balance [2].",
    " You can see it under Billing [1].",
    *[f" Detail number {i} about the refund [3]." for i in range(4, 13)],
]
SLOW_REPLY = Reply(chunks=SENTENCES, chunk_delay_s=0.4)
#: The model takes 4 s to start writing.
LATE_REPLY = Reply(chunks=SENTENCES[:2], delay_s=4.0)
POLL_S = 30.0


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "sqlite":
        yield ""  # the data dir's SQLite file
        return
    with temporary_database(PG_ADMIN_URL, "citewall_stop") as url:
        yield url


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(default=SLOW_REPLY) as server:
        yield server


@pytest.fixture(scope="module")
def served(
    database: str, model: ScriptedOpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Served, dict[str, str]]]:
    data_dir = tmp_path_factory.mktemp("stop-server")
    env = bench_env(
        data_dir,
        generator="openai",
        openai_base_url=model.base_url,
        reranker_enabled="false",
        openai_retries="0",
    )
    env["CITEWALL_DATABASE_URL"] = database
    citewall_cli(["ingest", str(KB_FILE), "--no-progress"], env)
    tokens = {"member": add_user(env, "member"), "admin": add_user(env, "root", "admin")}
    log = Path(data_dir) / "serve.log"
    try:
        with serving(env, log) as server:
            yield server, tokens
    except Exception:
        print(log.read_text(errors="replace")[-4000:])
        raise


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def read_then_hang_up(served: Served, token: str, tokens_wanted: int) -> tuple[str, list[str]]:
    """POST /chat/stream, read ``meta`` and up to ``tokens_wanted`` token deltas, then close the
    connection. Returns (conversation id, the deltas received)."""
    conversation_id, deltas, event = "", [], ""
    with (
        httpx.Client(timeout=30) as client,
        client.stream(
            "POST",
            f"{served.base_url}/api/v1/chat/stream",
            json={"message": EXTERNAL_QUESTION},
            headers=auth(token),
        ) as response,
    ):
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data = json.loads(line[5:])
                assert event in {"meta", "token"}, (event, data)
                if event == "meta":
                    conversation_id = data["conversation_id"]
                else:
                    deltas.append(data["delta"])
                if len(deltas) >= tokens_wanted:
                    break  # leaving both blocks closes the connection mid-stream
    assert conversation_id
    return conversation_id, deltas


def poll(what: str, check: Callable[[], Any]) -> Any:
    """``check()`` until it returns something truthy, for at most ``POLL_S`` seconds."""
    deadline = time.monotonic() + POLL_S
    while time.monotonic() < deadline:
        if result := check():
            return result
        time.sleep(0.25)
    raise AssertionError(f"not within {POLL_S:.0f} s: {what}")


def test_hanging_up_mid_answer_stores_the_prose_received(
    served: tuple[Served, dict[str, str]],
) -> None:
    server, tokens = served
    started = time.monotonic()
    cid, deltas = read_then_hang_up(server, tokens["member"], 3)
    received = "".join(deltas)
    assert received.startswith("Refunds take five to ten business days.")
    assert time.monotonic() - started < 0.4 * len(SENTENCES) - 1, "it did not wait for the end"

    def stored() -> Any:
        r = httpx.get(
            f"{server.base_url}/api/v1/conversations/{cid}", headers=auth(tokens["member"])
        )
        return r.json() if r.status_code == 200 else None

    history = poll("the stopped answer is stored", stored)
    question, answer = history["messages"]
    assert question["content"] == EXTERNAL_QUESTION
    assert answer["answer_status"] == "stopped"
    # What a reload shows is what the client read (or at most what was already in flight).
    assert answer["content"].startswith(received.rstrip())
    assert len(answer["content"]) < len("".join(SENTENCES)) - 100
    assert "Detail number 5" not in answer["content"]
    assert not MARKER.search(answer["content"])

    full = httpx.get(
        f"{server.base_url}/api/v1/admin/conversations/{cid}", headers=auth(tokens["admin"])
    ).json()
    stored_answer = full["messages"][1]
    assert stored_answer["answer_status"] == "stopped"
    assert stored_answer["content"].startswith(SENTENCES[0] + SENTENCES[1])  # markers kept
    events = sorted(full["retrieval_events"], key=lambda e: e["final_rank"])
    assert events, "the retrieval events are stored with the stopped answer"
    cited_ranks = {e["final_rank"] for e in events if e["cited"]}
    assert cited_ranks == {1, 2}
    assert {s["card_id"] for s in stored_answer["sources"]} == {
        e["card_id"] for e in events if e["cited"]
    }
    metrics = httpx.get(f"{server.base_url}/metrics").text
    assert 'citewall_answers_stopped_total{stored="true"} 1.0' in metrics


def test_hanging_up_before_any_prose_stores_nothing(
    served: tuple[Served, dict[str, str]], model: ScriptedOpenAIServer
) -> None:
    server, tokens = served
    model.enqueue(LATE_REPLY)
    cid, deltas = read_then_hang_up(server, tokens["member"], 0)
    assert deltas == []

    def heard() -> bool:
        metrics = httpx.get(f"{server.base_url}/metrics").text
        return 'citewall_answers_stopped_total{stored="false"} 1.0' in metrics

    poll("the server handled the stop", heard)
    r = httpx.get(f"{server.base_url}/api/v1/conversations/{cid}", headers=auth(tokens["member"]))
    assert r.status_code == 404, "a conversation stopped before any prose is not stored"
    listing = httpx.get(f"{server.base_url}/api/v1/conversations", headers=auth(tokens["member"]))
    assert cid not in {c["id"] for c in listing.json()}
