"""``citewall serve --workers 2``: two worker processes on one port, one rate limit in Redis.

The server runs as a subprocess on a small ingested KB. Its two workers each load their own
models; 30 requests from one member at a limit of 20 a minute get exactly 10 refusals, because
the window lives in Redis, not in either worker; ``kill -9`` of one worker loses no answer the
other can give, and uvicorn replaces the dead one.
"""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from testenv import REDIS_URL

from citewall_evals.bench.server import read_rss_kb, worker_pids

from .rig import QUESTIONS, prepare_served_dir, served_env
from .services import ServeProcess, wait_until

pytestmark = pytest.mark.slow


@pytest.fixture
def two_workers(
    rig_dir: Path, embedder: Any, tmp_path: Path
) -> Iterator[tuple[ServeProcess, dict[str, str]]]:
    tokens = prepare_served_dir(rig_dir, embedder)
    prefix = f"citewall-test-{uuid.uuid4().hex[:8]}:"
    env = served_env(
        rig_dir,
        CITEWALL_RATE_LIMIT_PER_MINUTE="20",
        CITEWALL_REDIS_URL=REDIS_URL,
        CITEWALL_REDIS_KEY_PREFIX=prefix,
    )
    server = ServeProcess(env, log_path=tmp_path / "serve.log", args=["--workers", "2"])
    server.start(timeout_s=240)
    try:
        assert server.returncode is None, server.log
        wait_until(lambda: len(worker_pids(server.pid)) == 2, 120, "two workers")
        wait_until(
            lambda: httpx.get(f"{server.base_url}/readyz", timeout=5).status_code == 200,
            240,
            "both workers ready",
        )
        yield server, tokens
    finally:
        server.kill()
        client = redis.Redis.from_url(REDIS_URL)
        for key in client.scan_iter(match=prefix + "*"):
            client.delete(key)


def test_two_workers_share_one_rate_limit_and_survive_losing_one(
    two_workers: tuple[ServeProcess, dict[str, str]],
) -> None:
    server, tokens = two_workers
    workers = worker_pids(server.pid)
    assert all((read_rss_kb(pid) or 0) > 100_000 for pid in workers)  # each loaded its own models

    def me(token: str) -> int:
        headers = {"Authorization": f"Bearer {token}"}
        return httpx.get(f"{server.base_url}/api/v1/me", headers=headers, timeout=30).status_code

    with ThreadPoolExecutor(max_workers=6) as pool:
        statuses = list(pool.map(me, [tokens["member"]] * 30))
    assert statuses.count(200) == 20 and statuses.count(429) == 10, statuses

    # One worker is killed; the other keeps answering (the admin has a window of their own)
    # and uvicorn starts a replacement.
    victim = workers[0]
    os.kill(victim, signal.SIGKILL)
    r = httpx.post(
        f"{server.base_url}/api/v1/search",
        json={"query": QUESTIONS[0]},
        headers={"Authorization": f"Bearer {tokens['admin']}"},
        timeout=60,
    )
    assert r.status_code == 200, r.text
    wait_until(
        lambda: len(worker_pids(server.pid)) == 2 and victim not in worker_pids(server.pid),
        180,
        "a replacement worker",
    )
    assert [me(tokens["admin"]) for _ in range(3)] == [200, 200, 200]
    assert server.returncode is None, server.log
