"""A few seconds of the load generator (benchmarks/load.py) against a real ``citewall serve``:
concurrent chat requests and SSE streams, zero errors, latencies and RSS samples recorded.
The full run and its figures: ``python benchmarks/load.py`` and docs/reliability.md."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import pytest

from .rig import QUESTIONS, REPO_ROOT, prepare_served_dir, served_env
from .services import ServeProcess

pytestmark = pytest.mark.slow

T = TypeVar("T")


def _load_module() -> ModuleType:
    """benchmarks/load.py as a module (registered first: its dataclasses need sys.modules)."""
    if "citewall_bench_load" in sys.modules:
        return sys.modules["citewall_bench_load"]
    path = REPO_ROOT / "benchmarks" / "load.py"
    spec = importlib.util.spec_from_file_location("citewall_bench_load", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _run_in_own_loop(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` in a worker thread: the browser tests' Playwright sync API keeps an event
    loop running in the main thread for the rest of the pytest session."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def test_short_load_round_has_zero_errors(rig_dir: Path, embedder: Any, tmp_path: Path) -> None:
    load = _load_module()
    tokens = prepare_served_dir(rig_dir, embedder)
    server = ServeProcess(served_env(rig_dir), log_path=tmp_path / "serve.log").start()
    assert server.returncode is None, server.log
    try:
        result = _run_in_own_loop(
            load.run_round(
                server.base_url,
                tokens["member"],
                server.pid,
                duration_s=4.0,
                chat_clients=3,
                stream_clients=2,
                questions=list(QUESTIONS),
            )
        )
    finally:
        server.stop()
    summary = result.summary()
    assert summary["errors"] == 0, summary["first_errors"]
    assert summary["chat"]["n"] >= 3 and summary["stream"]["n"] >= 2, summary
    assert summary["stream_first_token"]["n"] == summary["stream"]["n"]
    assert summary["hybrid_paths"] == {"rrf_only": summary["requests"]}
    assert summary["rss_kb"]["samples"] >= 2 and summary["rss_kb"]["min"] > 50_000


def test_memory_verdict_follows_the_fitted_slope() -> None:
    load = _load_module()
    assert load.rss_slope_kb_per_round([100, 110, 120]) == 10.0
    # Not monotonic, but a clear upward trend (the shape measured in docs/reliability.md).
    assert load.memory_verdict([1_294_000, 1_290_000, 1_372_000, 1_348_000, 1_377_000]) == (
        "GROWING"
    )
    assert load.memory_verdict([1_300_000, 1_310_000, 1_295_000, 1_305_000]) == "no growth trend"
    assert load.memory_verdict([1_300_000, 1_320_000]) == "too few rounds to tell"


def test_load_refuses_anything_but_loopback() -> None:
    load = _load_module()
    with pytest.raises(ValueError, match="loopback"):
        _run_in_own_loop(
            load.run_round(
                "http://10.0.0.1:80",
                "t",
                1,
                duration_s=1,
                chat_clients=1,
                stream_clients=0,
                questions=["q"],
            )
        )
