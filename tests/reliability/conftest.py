"""Reliability fixtures: a real citewall over a small demo-KB slice (see ``rig.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .rig import Rig, build_rig


@pytest.fixture(scope="module")
def shared_rig(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Rig]:
    """One SQLite + embedded-Chroma rig per module (extractive generator, no reranker)."""
    rig = build_rig(tmp_path_factory.mktemp("rig") / "data", embedder)
    yield rig
    rig.close()


@pytest.fixture
def rig_dir(tmp_path: Path) -> Path:
    """A fresh data dir for a test that builds its own rig."""
    d = tmp_path / "data"
    d.mkdir()
    return d
