"""Bounded, self-stopping load on loopback against a real ``citewall serve`` subprocess.

Sets up a temporary data dir with the demo KB (``citewall ingest``) and a member
(``citewall users add``), starts ``citewall serve`` on 127.0.0.1, and runs ``--rounds`` rounds
of ``--duration`` seconds each: ``--chat-clients`` concurrent clients posting
``/api/v1/chat`` and ``--stream-clients`` reading ``/api/v1/chat/stream`` SSE streams to
their ``final`` event, back to back (each client starts a new conversation every 4 turns).
Reports throughput, p50/p95/p99 latency (streams: also time to the first token), the error
count (anything but a 200 with a whole answer; must be 0) and the server's RSS from
/proc/<pid>/status before, during and after every round, with the per-round growth.
JSON and Markdown go to ``--out``. Exit 1 on any error.

    python benchmarks/load.py --rounds 3 --duration 20 --chat-clients 8 --stream-clients 4

Only 127.0.0.1 is ever contacted; every round stops by itself after ``--duration`` seconds
(requests in flight are awaited, never cut off).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from citewall_evals.bench.server import bench_env, prepare, serving
from citewall_evals.bench.stats import percentile
from citewall_evals.data import DEMO_CARDS, QUESTIONS_DIR
from citewall_evals.questions import load_questions

REPO_ROOT = Path(__file__).resolve().parent.parent


def read_rss_kb(pid: int) -> int:
    """Resident set size of ``pid`` in kB (``VmRSS`` in /proc/<pid>/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise ValueError(f"no VmRSS for pid {pid}")


@dataclass
class RoundResult:
    """One round's measurements."""

    duration_s: float
    chat_latency_s: list[float] = field(default_factory=list)
    stream_latency_s: list[float] = field(default_factory=list)
    stream_first_token_s: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    paths: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        def stats(values: list[float]) -> dict[str, Any]:
            return {
                "n": len(values),
                "p50_ms": round(1000 * percentile(values, 0.50), 1),
                "p95_ms": round(1000 * percentile(values, 0.95), 1),
                "p99_ms": round(1000 * percentile(values, 0.99), 1),
                "max_ms": round(1000 * max(values), 1) if values else None,
            }

        done = len(self.chat_latency_s) + len(self.stream_latency_s)
        return {
            "duration_s": round(self.duration_s, 2),
            "requests": done,
            "throughput_rps": round(done / self.duration_s, 2) if self.duration_s else 0.0,
            "errors": len(self.errors),
            "first_errors": self.errors[:5],
            "chat": stats(self.chat_latency_s),
            "stream": stats(self.stream_latency_s),
            "stream_first_token": stats(self.stream_first_token_s),
            "hybrid_paths": dict(sorted(self.paths.items())),
            "rss_kb": {
                "min": min(self.rss_kb) if self.rss_kb else None,
                "max": max(self.rss_kb) if self.rss_kb else None,
                "samples": len(self.rss_kb),
            },
        }


async def _chat_client(
    http: httpx.AsyncClient,
    headers: dict[str, str],
    questions: list[str],
    i: int,
    stop_at: float,
    result: RoundResult,
) -> None:
    conversation: str | None = None
    n = 0
    while time.monotonic() < stop_at:
        body = {"message": questions[(i * 7 + n) % len(questions)], "conversation_id": conversation}
        t0 = time.perf_counter()
        try:
            r = await http.post("/api/v1/chat", json=body, headers=headers)
            elapsed = time.perf_counter() - t0
            if r.status_code != 200 or not r.json().get("answer"):
                result.errors.append(f"chat {r.status_code}: {r.text[:200]}")
            else:
                result.chat_latency_s.append(elapsed)
                path = str(r.json().get("hybrid_path"))
                result.paths[path] = result.paths.get(path, 0) + 1
                conversation = r.json()["conversation_id"] if (n + 1) % 4 else None
        except httpx.HTTPError as exc:
            result.errors.append(f"chat {type(exc).__name__}: {exc}")
        n += 1


async def _stream_client(
    http: httpx.AsyncClient,
    headers: dict[str, str],
    questions: list[str],
    i: int,
    stop_at: float,
    result: RoundResult,
) -> None:
    conversation: str | None = None
    n = 0
    while time.monotonic() < stop_at:
        body = {
            "message": questions[(i * 11 + n) % len(questions)],
            "conversation_id": conversation,
        }
        t0 = time.perf_counter()
        first: float | None = None
        events: list[str] = []
        final: dict[str, Any] | None = None
        try:
            async with http.stream("POST", "/api/v1/chat/stream", json=body, headers=headers) as r:
                if r.status_code != 200:
                    result.errors.append(f"stream {r.status_code}: {(await r.aread())[:200]!r}")
                    n += 1
                    continue
                name = ""
                async for line in r.aiter_lines():
                    if line.startswith("event:"):
                        name = line[6:].strip()
                        events.append(name)
                        if name == "token" and first is None:
                            first = time.perf_counter() - t0
                    elif line.startswith("data:") and name == "final":
                        final = json.loads(line[5:])
            elapsed = time.perf_counter() - t0
            if final is None or "error" in events:
                result.errors.append(f"stream ended without final: {events[-3:]}")
            else:
                result.stream_latency_s.append(elapsed)
                if first is not None:
                    result.stream_first_token_s.append(first)
                path = str(final.get("hybrid_path"))
                result.paths[path] = result.paths.get(path, 0) + 1
                conversation = final["conversation_id"] if (n + 1) % 4 else None
        except httpx.HTTPError as exc:
            result.errors.append(f"stream {type(exc).__name__}: {exc}")
        n += 1


async def _sample_rss(pid: int, stop: asyncio.Event, result: RoundResult) -> None:
    while not stop.is_set():
        with contextlib.suppress(OSError, ValueError):
            result.rss_kb.append(read_rss_kb(pid))
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=0.5)


async def run_round(
    base_url: str,
    token: str,
    pid: int,
    *,
    duration_s: float,
    chat_clients: int,
    stream_clients: int,
    questions: list[str],
) -> RoundResult:
    """One bounded round: clients run until ``duration_s`` has passed, then finish their turn."""
    if not base_url.startswith("http://127.0.0.1:"):
        raise ValueError(f"load is generated on loopback only, not {base_url}")
    headers = {"Authorization": f"Bearer {token}"}
    limits = httpx.Limits(max_connections=chat_clients + stream_clients + 2)
    result = RoundResult(duration_s=duration_s)
    stop = asyncio.Event()
    async with httpx.AsyncClient(base_url=base_url, timeout=120, limits=limits) as http:
        sampler = asyncio.create_task(_sample_rss(pid, stop, result))
        t0 = time.monotonic()
        stop_at = t0 + duration_s
        await asyncio.gather(
            *(
                _chat_client(http, headers, questions, i, stop_at, result)
                for i in range(chat_clients)
            ),
            *(
                _stream_client(http, headers, questions, i, stop_at, result)
                for i in range(stream_clients)
            ),
        )
        result.duration_s = time.monotonic() - t0
        stop.set()
        await sampler
    return result


def markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: one row per round, then the RSS trend."""
    cfg = report["config"]
    lines = [
        f"Load: {cfg['chat_clients']} chat + {cfg['stream_clients']} stream clients, "
        f"{cfg['rounds']} rounds x {cfg['duration_s']} s, {cfg['cards']} demo cards, "
        f"hybrid path(s) {', '.join(report['hybrid_paths'])}; machine load average at start "
        f"{report['machine']['loadavg_start']} on {report['machine']['cpus']} CPUs.",
        "",
        "| round | requests | req/s | errors | chat p50 / p95 / p99 ms | "
        "stream p50 / p95 / p99 ms | first token p50 ms | RSS during max MB | RSS after MB |",
        "|---:|---:|---:|---:|---|---|---:|---:|---:|",
    ]
    for i, r in enumerate(report["rounds"], 1):
        c, s, f = r["chat"], r["stream"], r["stream_first_token"]
        lines.append(
            f"| {i} | {r['requests']} | {r['throughput_rps']} | {r['errors']} | "
            f"{c['p50_ms']} / {c['p95_ms']} / {c['p99_ms']} | "
            f"{s['p50_ms']} / {s['p95_ms']} / {s['p99_ms']} | {f['p50_ms']} | "
            f"{r['rss_kb']['max'] / 1024:.0f} | {r['rss_after_kb'] / 1024:.0f} |"
        )
    m = report["memory"]
    lines += [
        "",
        f"RSS before load {m['before_kb'] / 1024:.0f} MB; after each round "
        f"{', '.join(f'{v / 1024:.0f}' for v in m['after_round_kb'])} MB; growth from round 1 "
        f"to round {len(m['after_round_kb'])}: {m['growth_after_first_round_kb'] / 1024:+.1f} MB, "
        f"fitted slope {m['slope_kb_per_round'] / 1024:+.1f} MB per round ({m['verdict']}). "
        f"Total errors: {report['errors']}.",
    ]
    return "\n".join(lines) + "\n"


def rss_slope_kb_per_round(after_round_kb: list[int]) -> float:
    """Least-squares slope of RSS after each round, in kB per round (0.0 for < 2 rounds)."""
    n = len(after_round_kb)
    if n < 2:
        return 0.0
    mean_x, mean_y = (n - 1) / 2, sum(after_round_kb) / n
    num = sum((x - mean_x) * (y - mean_y) for x, y in enumerate(after_round_kb))
    den = sum((x - mean_x) ** 2 for x in range(n))
    return num / den


def memory_verdict(after_round_kb: list[int], tolerance: float = 0.01) -> str:
    """GROWING when the fitted RSS slope across rounds exceeds ``tolerance`` of round 1's RSS
    per round (1 %: ~13 MB per round for a 1.3 GB server), else "no growth trend"."""
    if len(after_round_kb) < 3:
        return "too few rounds to tell"
    slope = rss_slope_kb_per_round(after_round_kb)
    return "GROWING" if slope > tolerance * after_round_kb[0] else "no growth trend"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=20.0, help="seconds per round")
    parser.add_argument("--chat-clients", type=int, default=8)
    parser.add_argument("--stream-clients", type=int, default=4)
    parser.add_argument("--kb", type=Path, default=DEMO_CARDS)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "benchmarks/results/load")
    args = parser.parse_args(argv)
    if not (1 <= args.rounds <= 20 and 1 <= args.duration <= 600):
        parser.error("--rounds 1..20 and --duration 1..600 (the load must stay bounded)")

    with tempfile.TemporaryDirectory(prefix="citewall-load-") as tmp:
        env = bench_env(Path(tmp) / "data", reranker_enabled="false")
        print(f"ingesting {args.kb} ...", flush=True)
        token = prepare(env, args.kb, "load-member")
        questions = [q.question for q in load_questions(QUESTIONS_DIR / "questions.dev.jsonl")]
        with serving(env, log=Path(tmp) / "serve.log") as served:
            pid = served.process.pid
            # Warm-up: first requests pay lazy imports and allocator growth.
            asyncio.run(
                run_round(
                    served.base_url,
                    token,
                    pid,
                    duration_s=3,
                    chat_clients=2,
                    stream_clients=1,
                    questions=questions[:60],
                )
            )
            before = read_rss_kb(pid)
            rounds: list[dict[str, Any]] = []
            after: list[int] = []
            for i in range(args.rounds):
                r = asyncio.run(
                    run_round(
                        served.base_url,
                        token,
                        pid,
                        duration_s=args.duration,
                        chat_clients=args.chat_clients,
                        stream_clients=args.stream_clients,
                        questions=questions[:60],
                    )
                )
                time.sleep(1.0)
                after.append(read_rss_kb(pid))
                summary = r.summary() | {"rss_after_kb": after[-1]}
                rounds.append(summary)
                print(f"round {i + 1}: {json.dumps(summary)}", flush=True)
    paths: set[str] = set()
    for summary in rounds:
        paths |= set(summary["hybrid_paths"])
    report = {
        "config": {
            "rounds": args.rounds,
            "duration_s": args.duration,
            "chat_clients": args.chat_clients,
            "stream_clients": args.stream_clients,
            "cards": sum(1 for ln in args.kb.read_text().splitlines() if ln.strip()),
            "generator": "extractive",
            "reranker": "disabled",
        },
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_start": round(os.getloadavg()[0], 2),
        },
        "hybrid_paths": sorted(paths),
        "errors": sum(summary["errors"] for summary in rounds),
        "rounds": rounds,
        "memory": {
            "before_kb": before,
            "after_round_kb": after,
            "growth_after_first_round_kb": after[-1] - after[0],
            "slope_kb_per_round": round(rss_slope_kb_per_round(after), 1),
            "verdict": memory_verdict(after),
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
