"""The pure parts of `citewall demo`, and the benchmarks' percentile rule."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from citewall.cli.demo import demo_tokens
from citewall.evals.bench.stats import percentile

from .conftest import ApiEnv


def test_demo_users_are_created_once_and_get_fresh_working_tokens(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    first = demo_tokens(env.runtime.session_factory)
    second = demo_tokens(env.runtime.session_factory)
    assert set(first) == {"demo-member", "demo-admin"}
    assert all(first[k] != second[k] for k in first)  # fresh each run
    for tokens in (first, second):
        me = env.client.get(
            "/api/v1/me", headers={"Authorization": f"Bearer {tokens['demo-admin']}"}
        )
        assert me.json() == {"name": "demo-admin", "role": "admin"}
        me = env.client.get(
            "/api/v1/me", headers={"Authorization": f"Bearer {tokens['demo-member']}"}
        )
        assert me.json() == {"name": "demo-member", "role": "member"}


@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=200), st.floats(0, 1))
def test_percentile_is_bounded_and_monotone(values: list[float], q: float) -> None:
    p = percentile(values, q)
    assert min(values) <= p <= max(values)
    assert percentile(values, 0.0) == min(values) and percentile(values, 1.0) == max(values)
    assert percentile(values, min(1.0, q + 0.1)) >= p - 1e-9


def test_percentile_of_nothing_is_nan() -> None:
    assert math.isnan(percentile([], 0.5))
