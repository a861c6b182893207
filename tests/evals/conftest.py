"""One evaluation workspace per test session: the demo and hostile KBs ingested once, the real
runtime and app, three users. Model and runtime setup is the expensive part, so it is shared."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def eval_workspace(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Any]:
    from citewall_evals.workspace import build_workspace

    ws = build_workspace(tmp_path_factory.mktemp("eval") / "data", embedder=embedder)
    try:
        yield ws
    finally:
        ws.close()


@pytest.fixture(scope="session")
def calibrated_judge(embedder: Any) -> Any:
    """The support judge calibrated on the shipped labels, and the calibration result."""
    from citewall_evals.data import DEMO_CARDS, HOSTILE_CARDS, SUPPORT_LABELS
    from citewall_evals.quality.calibration import calibrate, load_labels
    from citewall_evals.quality.support import SupportJudge
    from citewall_evals.redteam.catalogue import Catalogue

    catalogue = Catalogue.from_paths([DEMO_CARDS, HOSTILE_CARDS])
    judge = SupportJudge(embedder, catalogue.cards)
    return judge, calibrate(judge, load_labels(SUPPORT_LABELS))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]
