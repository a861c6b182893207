"""What one request asks of the shared parts: SQL statements by verb, commits and vector-index
calls per search and per chat turn (``citewall bench capacity``'s per-request work).

The data dir is served in-process through the real app; SQLAlchemy's events count the SQL, a
wrapper around the retriever's index counts its calls (with ``CITEWALL_CHROMA_URL`` each is one
HTTP request to the Chroma server).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from fastapi.testclient import TestClient
from sqlalchemy import event
from sqlalchemy.engine import Engine

from citewall.api.app import create_app
from citewall.config import Settings
from citewall.kb.audiences import CardFilter
from citewall.retrieval.protocols import VectorIndex
from citewall.retrieval.records import ChunkRecord, Hit, Vector
from citewall.retrieval.retriever import HybridRetriever
from citewall.runtime import Runtime


@dataclass(frozen=True, slots=True)
class RequestWork:
    """What ``requests`` requests to ``POST /api/v1/<endpoint>`` asked of the shared parts,
    per request."""

    endpoint: str
    requests: int
    sql_by_verb: dict[str, float]
    sql_writes: float
    commits: float
    vector_queries: float
    vector_gets: float


class CountingVectorIndex:
    """A ``VectorIndex`` that counts the retriever's calls on the one it wraps."""

    def __init__(self, inner: VectorIndex) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    def upsert(self, records: Sequence[ChunkRecord], embeddings: npt.NDArray[np.float32]) -> None:
        self.calls["upsert"] += 1
        self.inner.upsert(records, embeddings)

    def delete(self, chunk_ids: Sequence[str]) -> None:
        self.calls["delete"] += 1
        self.inner.delete(chunk_ids)

    def query(self, embedding: Vector, k: int, *, cards: CardFilter) -> list[Hit]:
        self.calls["query"] += 1
        return self.inner.query(embedding, k, cards=cards)

    def get(self, chunk_ids: Sequence[str]) -> list[ChunkRecord]:
        self.calls["get"] += 1
        return self.inner.get(chunk_ids)

    def count(self) -> int:
        self.calls["count"] += 1
        return self.inner.count()


@contextmanager
def counting_sql(engine: Engine) -> Iterator[Counter[str]]:
    """Count the statements ``engine`` runs, by their first word, and its commits
    (``"COMMIT"``) while the block runs."""
    seen: Counter[str] = Counter()

    def statement(conn: object, cursor: object, sql: str, *args: object) -> None:
        seen[sql.lstrip().split(None, 1)[0].upper() if sql.strip() else "?"] += 1

    def commit(conn: object) -> None:
        seen["COMMIT"] += 1

    event.listen(engine, "before_cursor_execute", statement)
    event.listen(engine, "commit", commit)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", statement)
        event.remove(engine, "commit", commit)


def request_work(
    settings: Settings, token: str, questions: Sequence[str], requests: int
) -> list[RequestWork]:
    """Serve ``settings``' data dir in this process and count, per request, the SQL and the
    vector-index calls of ``requests`` searches and as many chat turns (each after one
    uncounted request that opens connections and warms caches)."""
    runtime = Runtime.from_settings(settings)
    if not isinstance(runtime.retriever, HybridRetriever):
        raise RuntimeError("request_work counts a HybridRetriever's vector-index calls")
    index = CountingVectorIndex(runtime.retriever.vector_index)
    runtime.retriever.vector_index = index
    headers = {"Authorization": f"Bearer {token}"}
    out = []
    try:
        with TestClient(create_app(runtime)) as client:
            for endpoint in ("search", "chat"):
                field = "query" if endpoint == "search" else "message"
                client.post(f"/api/v1/{endpoint}", json={field: questions[0]}, headers=headers)
                index.calls.clear()
                with counting_sql(runtime.engine) as sql:
                    for i in range(requests):
                        question = questions[(i + 1) % len(questions)]
                        r = client.post(
                            f"/api/v1/{endpoint}", json={field: question}, headers=headers
                        )
                        r.raise_for_status()
                per = {verb: round(n / requests, 2) for verb, n in sorted(sql.items())}
                writes = sum(sql[v] for v in ("INSERT", "UPDATE", "DELETE"))
                out.append(
                    RequestWork(
                        endpoint=f"POST /api/v1/{endpoint}",
                        requests=requests,
                        sql_by_verb={k: v for k, v in per.items() if k != "COMMIT"},
                        sql_writes=round(writes / requests, 2),
                        commits=round(sql["COMMIT"] / requests, 2),
                        vector_queries=round(index.calls["query"] / requests, 2),
                        vector_gets=round(index.calls["get"] / requests, 2),
                    )
                )
    finally:
        runtime.engine.dispose()
    return out
