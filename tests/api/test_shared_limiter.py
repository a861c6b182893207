"""The rate limit shared in Redis: one window across replicas, atomic, honest when Redis is down.

Runs against the real Redis on 127.0.0.1:6379 (``scripts/services`` starts it); each test uses
its own key prefix. "Replicas" here are separate limiter objects with separate connections,
as two ``citewall serve`` processes would have.
"""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterator

import pytest
import redis
from prometheus_client import CollectorRegistry, Counter
from testenv import REDIS_URL

from citewall.api.app import build_limiter
from citewall.api.limits import SlidingWindowLimiter
from citewall.api.shared_limiter import RedisDown, RedisWindowLimiter, connect
from citewall.config import load_settings
from citewall.errors import ConfigError, RateLimitedError, ServiceUnavailableError

from .conftest import ApiEnv


@pytest.fixture
def prefix() -> Iterator[str]:
    name = f"citewall-test:{uuid.uuid4().hex[:10]}:"
    yield name
    client = connect(REDIS_URL)
    for key in client.scan_iter(match=name + "*"):
        client.delete(key)


def errors_counter() -> Counter:
    return Counter("errors", "redis errors", registry=CollectorRegistry())


def replica(
    prefix: str, limit: int, now: list[float], url: str = REDIS_URL, on_down: RedisDown = "open"
) -> RedisWindowLimiter:
    try:
        connect(REDIS_URL).ping()
    except redis.RedisError as exc:  # pragma: no cover - scripts/services starts Redis
        pytest.fail(f"Redis at {REDIS_URL} is not usable: {exc}")
    return RedisWindowLimiter(
        connect(url),
        limit,
        on_down=on_down,
        errors=errors_counter(),
        clock=lambda: now[0],
        prefix=prefix,
    )


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_two_replicas_share_one_window(prefix: str) -> None:
    now = [1_000.0]
    replicas = [replica(prefix, 20, now), replica(prefix, 20, now)]
    refused = 0
    for i in range(30):
        try:
            replicas[i % 2].hit("user:1")
        except RateLimitedError as exc:
            refused += 1
            assert 1 <= exc.retry_after_s <= 60
        now[0] += 0.1
    assert refused == 10
    replicas[0].hit("user:2")  # another member has a window of their own


def test_the_window_slides_like_the_in_process_one(prefix: str) -> None:
    now = [1_000.0]
    shared, local = replica(prefix, 2, now), SlidingWindowLimiter(2, clock=lambda: now[0])
    for step in (0.0, 30.0):
        now[0] += step
        shared.hit("k")
        local.hit("k")
    for limiter in (shared, local):
        with pytest.raises(RateLimitedError) as err:
            limiter.hit("k")
        assert err.value.retry_after_s == 30
    now[0] += 30.5  # the first hit has left the window
    shared.hit("k")
    local.hit("k")


def test_concurrent_hits_never_pass_the_limit(prefix: str) -> None:
    now = [1_000.0]
    replicas = [replica(prefix, 25, now) for _ in range(4)]
    allowed: list[int] = []
    lock = threading.Lock()

    def burst(limiter: RedisWindowLimiter) -> None:
        for _ in range(20):
            try:
                limiter.hit("user:7")
            except RateLimitedError:
                continue
            with lock:
                allowed.append(1)

    threads = [threading.Thread(target=burst, args=(r,)) for r in replicas]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(allowed) == 25


def test_redis_down_fails_open_or_closed_as_configured(prefix: str) -> None:
    now = [1_000.0]
    dead = f"redis://127.0.0.1:{closed_port()}/0"
    open_limiter = replica(prefix, 1, now, url=dead, on_down="open")
    for _ in range(3):
        open_limiter.hit("k")  # over the limit, but let through: the limit fails open
    assert open_limiter.status() == {"ok": False, "shared": True, "when_down": "open"}
    closed_limiter = replica(prefix, 1, now, url=dead, on_down="closed")
    with pytest.raises(ServiceUnavailableError):
        closed_limiter.hit("k")


def test_redis_down_is_a_503_and_unready_when_the_limit_fails_closed(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    settings = load_settings(
        redis_url=f"redis://127.0.0.1:{closed_port()}/0", rate_limit_redis_down="closed"
    )
    old = env.app.state.limiter
    env.app.state.limiter = build_limiter(
        settings, lambda: 1_000.0, env.app.state.metrics.rate_limit_redis_errors
    )
    try:
        r = env.client.get("/api/v1/me", headers=env.auth("member"))
        assert r.status_code == 503, r.text
        assert "retry" in r.json()["detail"]
        ready = env.client.get("/readyz", headers=env.auth("admin"))
        assert ready.status_code == 503
        metrics = env.client.get("/metrics").text
        assert "citewall_rate_limit_redis_errors_total 1.0" in metrics
    finally:
        env.app.state.limiter = old


def test_the_redis_url_is_checked_at_start_up() -> None:
    with pytest.raises(ConfigError, match="CITEWALL_REDIS_URL"):
        load_settings(redis_url="http://127.0.0.1:6379")
    assert load_settings(redis_url="redis://127.0.0.1:6379/0").redis_url
