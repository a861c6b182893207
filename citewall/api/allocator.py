"""Cap glibc's malloc arenas for the server process.

Requests run on a pool of worker threads; glibc gives each thread that allocates heavily
(tokenisers, torch, numpy) an arena of its own, up to 8 per core, and freed memory stays
fragmented across them. Under sustained load the server's RSS then grows round after round
(docs/reliability.md). Two arenas keep it flat without costing throughput on 2 cores. This is
what ``MALLOC_ARENA_MAX`` does, applied with ``mallopt`` before any worker thread starts.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

log = logging.getLogger(__name__)

#: glibc's mallopt parameter number for the arena cap (malloc.h: M_ARENA_MAX).
M_ARENA_MAX = -8


def cap_malloc_arenas(arenas: int) -> bool:
    """Limit glibc malloc to ``arenas`` arenas; False where the C library is not glibc."""
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        return bool(libc.mallopt(ctypes.c_int(M_ARENA_MAX), ctypes.c_int(arenas)))
    except (OSError, AttributeError):
        log.info("malloc arena cap not applied: %s has no mallopt", name)
        return False
