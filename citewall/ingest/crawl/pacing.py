"""The per-host delay: the least time between the starts of two requests to one host."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class HostPacer:
    """Hands out request slots per host, ``delay_s`` apart, to any number of threads.

    A slot is reserved under a lock and waited for outside it, so threads queue in order and
    a host's requests never start closer together than its delay, whatever the concurrency.
    """

    def __init__(
        self,
        delay_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._default = delay_s
        self._delays: dict[str, float] = {}
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()
        self._clock = clock
        self._sleep = sleep

    def ask_at_least(self, host: str, delay_s: float) -> None:
        """Raise ``host``'s delay to ``delay_s`` (robots.txt asks for more than the setting)."""
        with self._lock:
            self._delays[host] = max(self._delays.get(host, self._default), delay_s)

    def wait(self, host: str) -> None:
        """Block until ``host`` may be sent the next request."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._next.get(host, now))
            self._next[host] = slot + self._delays.get(host, self._default)
        if slot > now:
            self._sleep(slot - now)
