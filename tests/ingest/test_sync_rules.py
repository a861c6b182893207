"""The sync rules: schedules, the shrink hold, failing and stale pages (property tests)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.errors import UserError
from citewall.ingest.sync_rules import (
    MIN_EVERY_S,
    failing_after,
    held_reason,
    parse_every,
    stale_pages,
)

UNITS = {"m": 60, "h": 3600, "d": 86400}


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 500), st.sampled_from("mhd")), min_size=1, max_size=3))
def test_every_reads_back_the_seconds_it_was_written_with(parts: list[tuple[int, str]]) -> None:
    text = "".join(f"{n}{u}" for n, u in parts)
    seconds = sum(n * UNITS[u] for n, u in parts)
    if seconds < MIN_EVERY_S:
        with pytest.raises(UserError, match="shortest"):
            parse_every(text)
    else:
        assert parse_every(text) == seconds


@pytest.mark.parametrize("text", ["", "6", "h", "6 h", "-1h", "6x", "1.5h", "6h!"])
def test_every_refuses_what_is_not_a_duration(text: str) -> None:
    with pytest.raises(UserError, match="not a duration"):
        parse_every(text)


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 10_000))
def test_a_sync_is_held_exactly_when_the_source_lost_more_than_half(
    stored: int, listed: int
) -> None:
    assert (held_reason(stored, listed) is not None) == (listed * 2 < stored)


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 10_000), st.integers(0, 10_000))
def test_listing_more_never_holds_what_listing_less_applies(
    stored: int, listed: int, more: int
) -> None:
    if held_reason(stored, listed) is None:
        assert held_reason(stored, listed + more) is None


URLS = st.sampled_from(["a", "b", "c", "d"])


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.lists(URLS, max_size=4), max_size=8), st.integers(1, 5))
def test_a_page_is_stale_after_that_many_unreadable_syncs_in_a_row(
    syncs: list[list[str]], after: int
) -> None:
    failing: dict[str, int] = {}
    streak = {u: 0 for u in "abcd"}
    for unreadable in syncs:
        failing = failing_after(failing, unreadable)
        for url in streak:
            streak[url] = streak[url] + 1 if url in unreadable else 0
        assert failing == {u: n for u, n in streak.items() if n}
        assert stale_pages(failing, after) == sorted(u for u, n in streak.items() if n >= after)
