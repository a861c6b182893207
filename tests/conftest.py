"""Shared fixtures: an isolated data dir per test, settings, the packaged embedder, databases.

PostgreSQL: one fresh database per test session on 127.0.0.1:5432 (trust auth), dropped at the
end. Set CITEWALL_TEST_PG_ADMIN_URL to point elsewhere.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

# Tests never reach a model hub and never send telemetry.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

PG_ADMIN_URL = os.environ.get(
    "CITEWALL_TEST_PG_ADMIN_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
REPO_ROOT = Path(__file__).resolve().parent.parent
DEMO_KB = REPO_ROOT / "kb" / "demo"


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
