"""The per-member rate limit shared by every replica, in Redis (``CITEWALL_REDIS_URL``).

The same sliding window as ``limits.SlidingWindowLimiter``, kept as one sorted set per key
(scores are hit times in milliseconds) and checked and recorded by one Lua script, so two
replicas hitting the same key at once cannot both take the last slot.

When Redis cannot be reached the limiter does what ``CITEWALL_RATE_LIMIT_REDIS_DOWN`` says:
``open`` lets the request through, ``closed`` refuses it with an honest 503. Either way the
failure is logged (at most once a minute), counted in ``citewall_rate_limit_redis_errors_total``
and shown by ``/readyz``. Redis here keeps nothing on disk: a restart forgets every window, so
each member starts a fresh minute.
"""

from __future__ import annotations

import logging
import math
import secrets
import threading
import time
from collections.abc import Callable
from typing import Literal

import redis
from prometheus_client import Counter

from citewall.errors import RateLimitedError, ServiceUnavailableError

logger = logging.getLogger(__name__)

RedisDown = Literal["open", "closed"]

#: Seconds a Redis call may take before it counts as down (a limiter must not stall requests).
REDIS_TIMEOUT_S = 0.5

# KEYS[1]: the key's window; ARGV: now (ms), window (ms), limit, a unique member for this hit.
# Returns {1, 0} when the hit is recorded, {0, oldest hit (ms)} when the window is full.
_HIT_SCRIPT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, oldest[2]}
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, 0}
"""


def connect(url: str) -> redis.Redis:
    """A Redis client for ``url`` with short timeouts (no call waits long on a dead server)."""
    return redis.Redis.from_url(
        url, socket_timeout=REDIS_TIMEOUT_S, socket_connect_timeout=REDIS_TIMEOUT_S
    )


class RedisWindowLimiter:
    """At most ``limit`` hits per key in any ``window_s`` window, across every replica."""

    def __init__(
        self,
        client: redis.Redis,
        limit: int,
        *,
        on_down: RedisDown,
        errors: Counter,
        window_s: float = 60.0,
        clock: Callable[[], float] = time.time,
        prefix: str,
    ) -> None:
        self.limit = limit
        self.window_s = window_s
        self.on_down = on_down
        self._client = client
        self._script = client.register_script(_HIT_SCRIPT)
        self._errors = errors
        self._clock = clock
        self._prefix = prefix
        self._last_warning = -math.inf
        self._lock = threading.Lock()

    def hit(self, key: str) -> None:
        """Record one request for ``key``; ``RateLimitedError`` (with Retry-After) when the
        window is full, ``ServiceUnavailableError`` when Redis is down and the limit fails
        closed."""
        if self.limit <= 0:
            return
        now_ms = int(self._clock() * 1000)
        window_ms = int(self.window_s * 1000)
        member = f"{now_ms}:{secrets.token_hex(6)}"
        try:
            result = self._script(
                keys=[self._prefix + key], args=[now_ms, window_ms, self.limit, member]
            )
        except redis.RedisError as exc:
            self._down(exc)
            return
        allowed, oldest = int(result[0]), float(result[1])
        if not allowed:
            retry_after = max(1.0, math.ceil((oldest + window_ms - now_ms) / 1000))
            raise RateLimitedError(
                f"rate limit of {self.limit} requests per minute reached "
                "(CITEWALL_RATE_LIMIT_PER_MINUTE); retry later",
                retry_after_s=retry_after,
            )

    def _down(self, exc: redis.RedisError) -> None:
        self._errors.inc()
        now = time.monotonic()
        with self._lock:
            if now - self._last_warning >= 60:
                self._last_warning = now
                logger.warning(
                    "rate limit store unreachable (%s); failing %s",
                    exc.__class__.__name__,
                    self.on_down,
                )
        if self.on_down == "closed":
            raise ServiceUnavailableError(
                "the rate limiter is unavailable, so requests are refused for now; please retry"
            ) from exc

    def status(self) -> dict[str, object]:
        """For ``/readyz``: whether Redis answers, and what happens when it does not."""
        try:
            ok = bool(self._client.ping())
        except redis.RedisError:
            ok = False
        return {"ok": ok, "shared": True, "when_down": self.on_down}
