"""The exposure budget against races, on real servers: a conversation deleted while its answer
streams, and one member's parallel requests (docs/distillation.md, "The budget guarantee").

A scripted model writes slowly and cites every card of its context, so each answer exposes the
internal cards of its context. SQLite with one ``citewall serve``, and PostgreSQL with two
replicas sharing a ``chroma run`` server. What a member was shown must be stored with its
exposure rows whatever happens to the conversation, and one member's distinct internal cards
must never pass the budget plus the internal cards of one answer's context
(``CITEWALL_CONTEXT_K``), however many of their requests run at once.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from builders import add_exposed_turn
from pgdb import temporary_database
from sqlalchemy import Engine, distinct, func, select, text
from sqlalchemy.orm import Session
from testenv import PG_ADMIN_URL

from citewall.boundary.prose import prose_only
from citewall.storage import db, users
from citewall.storage.models import Exposure, Message
from citewall_evals.llm_server import Reply, ScriptedOpenAIServer

from .rig import ingest_kb, make_settings
from .services import ChromaServer, ServeProcess, wait_until

pytestmark = pytest.mark.slow

BUDGET = 3
#: Cards given to the model; an answer cites all of them, so it exposes its context's internal
#: cards (at most CONTEXT_K).
CONTEXT_K = 3
#: The property under test: one member's distinct internal cards within the window.
BOUND = BUDGET + CONTEXT_K
PARALLEL = 20
#: Milliseconds between starting a stream and deleting its conversation.
DELETE_AFTER_S = 0.02
#: Each delta cites one context slot; 60 ms apart, so a delete lands mid-answer.
SENTENCES = [
    "Start with the first step for this case [1].",
    " Then check the second point [2].",
    " Finally follow the last part [3].",
]
REPLY = Reply(text="".join(SENTENCES), chunks=SENTENCES, chunk_delay_s=0.06)
#: The API tests' KB: 12 external help pages and 12 internal playbooks.
KB_FILE = Path(__file__).parents[1] / "api" / "kb" / "cards.jsonl"
INTERNAL = [
    card
    for card in map(json.loads, KB_FILE.read_text(encoding="utf-8").splitlines())
    if not card.get("url")
]
INTERNAL_IDS = frozenset(card["id"] for card in INTERNAL)
#: One question per internal card (its title), so parallel questions reach different cards.
QUESTIONS = tuple(card["title"] for card in INTERNAL)

Mode = Literal["read", "hang_up", "regenerate"]


@dataclass
class Servers:
    """One or two ``citewall serve`` processes on one database."""

    database_url: str
    engine: Engine
    servers: list[ServeProcess]

    def member(self) -> tuple[str, int]:
        """A new member (a fresh budget): their bearer token and id."""
        with Session(self.engine) as session:
            user, token = users.create_user(session, f"m-{uuid.uuid4().hex[:8]}", "member")
            return token, user.id

    def url(self, n: int = 0) -> str:
        return self.servers[n % len(self.servers)].base_url


def serve_env(database_url: str, chroma_url: str, model_url: str) -> dict[str, str]:
    return {
        "CITEWALL_DATABASE_URL": database_url,
        "CITEWALL_CHROMA_URL": chroma_url,
        "CITEWALL_GENERATOR": "openai",
        "CITEWALL_OPENAI_BASE_URL": model_url,
        "CITEWALL_OPENAI_RETRIES": "0",
        "CITEWALL_RERANKER_ENABLED": "false",
        "CITEWALL_RATE_LIMIT_PER_MINUTE": "0",
        "CITEWALL_EXPOSURE_BUDGET_CARDS": str(BUDGET),
        "CITEWALL_CONTEXT_K": str(CONTEXT_K),
        "CITEWALL_LOG_LEVEL": "warning",
    }


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(default=REPLY) as server:
        yield server


def start(env: dict[str, str], data_dir: Path, name: str) -> ServeProcess:
    data_dir.mkdir(parents=True, exist_ok=True)
    server = ServeProcess(
        {**env, "CITEWALL_DATA_DIR": str(data_dir)}, log_path=data_dir.parent / f"{name}.log"
    )
    server.start(timeout_s=240)
    assert server.returncode is None, server.log
    return server


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    embedder: Any,
    model: ScriptedOpenAIServer,
) -> Iterator[Servers]:
    """SQLite: one server over the data dir it ingested into. PostgreSQL: two replicas with
    empty data dirs, one database and one Chroma server."""
    tmp = tmp_path_factory.mktemp(f"races-{request.param}")
    servers: list[ServeProcess] = []
    if request.param == "sqlite":
        settings = make_settings(tmp / "data")
        assert ingest_kb(settings, embedder, KB_FILE).refused == 0
        url = settings.sqlalchemy_url
        engine = db.make_engine(url)
        try:
            servers.append(start(serve_env("", "", model.base_url), tmp / "data", "serve"))
            yield Servers(url, engine, servers)
        finally:
            for server in servers:
                server.kill()
            engine.dispose()
        return
    chroma = ChromaServer(tmp / "chroma").start()
    try:
        with temporary_database(PG_ADMIN_URL, "citewall_races") as url:
            seed = make_settings(tmp / "seed", database_url=url, chroma_url=chroma.url)
            assert ingest_kb(seed, embedder, KB_FILE).refused == 0
            engine = db.make_engine(url)
            try:
                env = serve_env(url, chroma.url, model.base_url)
                for n in (1, 2):
                    servers.append(start(env, tmp / f"replica-{n}", f"replica-{n}"))
                yield Servers(url, engine, servers)
            finally:
                for server in servers:
                    server.kill()
                engine.dispose()
    finally:
        chroma.stop()


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class Streamed:
    """What one client of the SSE stream received."""

    events: list[str]
    tokens: list[str]
    error: dict[str, Any] | None = None


def read_stream(
    url: str,
    token: str,
    path: str,
    body: dict[str, Any] | None,
    hang_up_after: int | None = None,
    started: threading.Event | None = None,
) -> Streamed:
    """POST an SSE ``path`` and read it to the end, or hang up after ``hang_up_after`` tokens;
    ``started`` is set once the response has begun."""
    got = Streamed([], [])
    event = ""
    with (
        httpx.Client(timeout=60) as client,
        client.stream("POST", f"{url}{path}", json=body, headers=auth(token)) as response,
    ):
        assert response.status_code == 200, response.read()
        if started is not None:
            started.set()
        for line in response.iter_lines():
            if line.startswith("event:"):
                event = line[6:].strip()
                got.events.append(event)
            elif line.startswith("data:"):
                data = json.loads(line[5:])
                if event == "token":
                    got.tokens.append(data["delta"])
                elif event == "error":
                    got.error = data
                if hang_up_after is not None and len(got.tokens) >= hang_up_after:
                    break  # leaving the blocks closes the connection mid-answer
    return got


def chat(url: str, token: str, message: str, conversation_id: str | None = None) -> Any:
    r = httpx.post(
        f"{url}/api/v1/chat",
        json={"message": message, "conversation_id": conversation_id},
        headers=auth(token),
        timeout=60,
    )
    assert r.status_code == 200, r.text
    return r.json()


def assistant_messages(engine: Engine, conversation_id: str) -> list[Message]:
    with Session(engine) as session:
        return list(
            session.scalars(
                select(Message)
                .where(Message.conversation_id == conversation_id, Message.role == "assistant")
                .order_by(Message.seq)
            )
        )


def exposed_cards(engine: Engine, user_id: int, message_id: str | None = None) -> set[str]:
    query = select(Exposure.card_id).where(Exposure.user_id == user_id)
    if message_id is not None:
        query = query.where(Exposure.message_id == message_id)
    with Session(engine) as session:
        return set(session.scalars(query))


def distinct_cards(engine: Engine, user_id: int) -> int:
    with Session(engine) as session:
        return int(
            session.scalar(
                select(func.count(distinct(Exposure.card_id))).where(Exposure.user_id == user_id)
            )
            or 0
        )


def stream_then_delete(served: Servers, token: str, n: int, mode: Mode) -> tuple[str, Streamed]:
    """Open a conversation, stream an answer in it (``mode``) and delete the conversation
    ``DELETE_AFTER_S`` after the stream started (its response began: the turn was planned).
    Returns (conversation id, what was read)."""
    url = served.url(n)
    question = QUESTIONS[n % len(QUESTIONS)]
    if mode == "regenerate":
        cid = chat(url, token, question)["conversation_id"]
        path, body = f"/api/v1/conversations/{cid}/regenerate", None
    else:
        cid = chat(url, token, "hi")["conversation_id"]  # small talk: exposes nothing
        path, body = "/api/v1/chat/stream", {"message": question, "conversation_id": cid}
    result: dict[str, Streamed] = {}
    hang_up = 1 if mode == "hang_up" else None
    started = threading.Event()
    reader = threading.Thread(
        target=lambda: result.update(s=read_stream(url, token, path, body, hang_up, started))
    )
    reader.start()
    assert started.wait(60), "the stream did not start"
    time.sleep(DELETE_AFTER_S)
    deleted = httpx.delete(f"{served.url(n + 1)}/api/v1/conversations/{cid}", headers=auth(token))
    assert deleted.status_code == 204, deleted.text
    reader.join(timeout=60)
    return cid, result["s"]


def test_deleting_the_conversation_mid_answer_still_records_what_was_shown(
    served: Servers,
) -> None:
    token, user_id = served.member()
    modes: tuple[Mode, ...] = ("read", "hang_up", "regenerate")
    runs = [
        (n, modes[n % 3], *stream_then_delete(served, token, n, modes[n % 3])) for n in range(12)
    ]
    for n, mode, cid, streamed in runs:
        assert streamed.error is None, (mode, streamed.error)
        assert streamed.tokens, f"run {n} ({mode}) read no prose"
        # The turn the member read is stored, in the hidden conversation, after the opening
        # answer ("hi", or the question regenerated).

        def stored(cid: str = cid) -> list[Message]:
            messages = assistant_messages(served.engine, cid)
            return messages if len(messages) > 1 else []

        wait_until(lambda: bool(stored()), 30, f"run {n} ({mode}): the streamed turn stored")
        answer = stored()[-1]
        read = " ".join("".join(streamed.tokens).split())
        assert " ".join(prose_only(answer.content).split()).startswith(read), (mode, read)
        cited_internal = {s["card_id"] for s in answer.sources} & INTERNAL_IDS
        assert cited_internal <= exposed_cards(served.engine, user_id, str(answer.id)), mode
        gone = httpx.get(f"{served.url(n)}/api/v1/conversations/{cid}", headers=auth(token))
        assert gone.status_code == 404  # still hidden from the member
    # The budget held and restricted the later turns.
    assert distinct_cards(served.engine, user_id) <= BOUND
    restricted = [
        a.restricted for _, _, cid, _ in runs for a in assistant_messages(served.engine, cid)
    ]
    assert "exposure_budget" in restricted
    with served.engine.connect() as conn:
        left = conn.execute(
            text("SELECT COUNT(*) FROM exposure_reservations WHERE user_id = :u"), {"u": user_id}
        ).scalar_one()
    assert left == 0, "every stored turn settled its reservation"


def parallel_streams(served: Servers, token: str) -> list[Streamed]:
    def one(n: int) -> Streamed:
        body = {"message": QUESTIONS[n % len(QUESTIONS)]}
        return read_stream(served.url(n), token, "/api/v1/chat/stream", body, None)

    with ThreadPoolExecutor(PARALLEL) as pool:
        return list(pool.map(one, range(PARALLEL)))


def test_a_fresh_member_in_parallel_stays_within_the_budget(served: Servers) -> None:
    token, user_id = served.member()

    def one(n: int) -> Any:
        return chat(served.url(n), token, QUESTIONS[n % len(QUESTIONS)])

    with ThreadPoolExecutor(PARALLEL) as pool:
        answers = list(pool.map(one, range(PARALLEL)))
    assert len({a["message_id"] for a in answers}) == PARALLEL
    reached = distinct_cards(served.engine, user_id)
    print(f"fresh member, {PARALLEL} parallel chats, budget {BUDGET}: {reached} cards")
    assert BUDGET <= reached <= BOUND, reached


def test_a_member_one_card_short_in_parallel_stays_within_the_budget(served: Servers) -> None:
    token, user_id = served.member()
    with Session(served.engine) as session:
        spent = sorted(INTERNAL_IDS)[: BUDGET - 1]
        add_exposed_turn(session, user_id, datetime.now(UTC), {c: ((), 0) for c in spent})
    results = parallel_streams(served, token)
    assert all(r.error is None and r.events[-1] == "final" for r in results), results[:2]
    reached = distinct_cards(served.engine, user_id)
    print(f"member at {BUDGET - 1}, {PARALLEL} parallel streams, budget {BUDGET}: {reached} cards")
    assert BUDGET <= reached <= BOUND, reached
