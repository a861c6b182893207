"""The server caps glibc malloc arenas (RSS growth under load: docs/reliability.md)."""

from __future__ import annotations

import platform

import pytest

from citewall.api.allocator import cap_malloc_arenas


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_arena_cap_is_applied_on_glibc() -> None:
    assert cap_malloc_arenas(2) is True


def test_settings_default_caps_arenas_and_zero_turns_it_off() -> None:
    from citewall.config import load_settings

    assert load_settings().malloc_arena_max == 2
    assert not load_settings(malloc_arena_max=0).malloc_arena_max
