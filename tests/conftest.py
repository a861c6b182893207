"""Shared fixtures: an isolated data dir per test, settings, the packaged embedder, databases.

PostgreSQL: one fresh database per test session on 127.0.0.1:5432 (trust auth), dropped at the
end. Set CITEWALL_TEST_PG_ADMIN_URL to point elsewhere.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import is_hypothesis_test
from jwks_host import JwksHost, SigningKey, ec_key, rsa_key
from sqlalchemy.exc import OperationalError
from testenv import HYPOTHESIS_PROFILE, IN_CI, PG_ADMIN_URL

# Tests never reach a model hub and never send telemetry.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Every data dir of the run (servers started by tests included) shares one ONNX export cache:
# the models are exported once per run, not once per test.
os.environ.setdefault(
    "CITEWALL_MODEL_CACHE_DIR", str(Path(tempfile.gettempdir()) / "citewall-test-models")
)

REPO_ROOT = Path(__file__).resolve().parent.parent
DEMO_KB = REPO_ROOT / "kb" / "demo"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The explore run (``scripts/test --explore``) runs the property tests only."""
    if HYPOTHESIS_PROFILE != "explore":
        return
    keep = [i for i in items if is_hypothesis_test(getattr(i, "obj", None))]
    config.hook.pytest_deselected(items=[i for i in items if i not in keep])
    items[:] = keep


def _fail_skips_under_ci(report: pytest.CollectReport | pytest.TestReport) -> None:
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped under CI, where every required part must be present: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Under CI a skip is a failure: every required part is installed there, so a skip means
    one is missing (the skip's message names what to install)."""
    outcome = yield
    _fail_skips_under_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """The same for a whole module skipped at import (``pytest.skip(allow_module_level=True)``)."""
    outcome = yield
    _fail_skips_under_ci(outcome.get_result())


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    return d


@pytest.fixture
def settings(data_dir: Path) -> Any:
    from citewall.config import load_settings

    return load_settings(data_dir=data_dir, database_url=None, chroma_url=None)


@pytest.fixture(scope="session")
def embedder() -> Any:
    """The packaged all-MiniLM-L6-v2, loaded once per test session."""
    from citewall.config import load_settings
    from citewall.retrieval.embedder import load_embedder

    return load_embedder(load_settings())


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this test session, dropped afterwards."""
    from pgdb import temporary_database

    try:
        with temporary_database(PG_ADMIN_URL) as url:
            yield url
    except OperationalError as exc:  # pragma: no cover - scripts/services starts PostgreSQL
        pytest.fail(f"PostgreSQL at {PG_ADMIN_URL} is not usable: {exc}")


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Run a test on both databases: a SQLite file in tmp, and the session's PostgreSQL DB.

    PostgreSQL tests share one database per session; tests that need isolation should use
    unique names or clean up the tables they touch (see tests/storage/conftest.py).
    """
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'citewall.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture(scope="session")
def signing_keys() -> dict[str, SigningKey]:
    """Real keys made for this run: the host's RSA and EC keys, the proxy's, a rotated-in key
    and a stranger's RSA and EC keys (served by no JWKS)."""
    return {
        "rsa": rsa_key("host-rsa-1"),
        "ec": ec_key("host-ec-1"),
        "proxy": ec_key("proxy-ec-1"),
        "rotated": rsa_key("host-rsa-2"),
        "stranger": rsa_key("stranger"),
        "stranger-ec": ec_key("stranger-ec"),
    }


@pytest.fixture(scope="session")
def jwks_host() -> Iterator[JwksHost]:
    """A local HTTP server serving JWKS documents (tests set ``jwks_host.jwks[name]``)."""
    host = JwksHost()
    yield host
    host.close()
