"""`citewall ask` decides as the server does: the KB's calibration stored at ingest, not the
settings' fixed thresholds (the CLI must never answer where the server says "not found")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from citewall.api.app import create_app
from citewall.cli.main import app
from citewall.config import get_settings, load_settings
from citewall.ingest.pipeline import ingest_paths
from citewall.retrieval.answerability import Thresholds
from citewall.retrieval.calibrated import load_calibration, save_calibration
from citewall.runtime import Runtime
from citewall.storage import users

CARDS = [
    {
        "id": "ship-where",
        "title": "Where we ship",
        "body": "We ship to the United States and Canada. Orders leave our studio within two "
        "working days and arrive within a week.",
        "url": "https://shop.example.com/shipping",
    },
    {
        "id": "returns",
        "title": "Returns and exchanges",
        "body": "Unworn items can be returned within 30 days. Start a return from the link in "
        "your order confirmation email.",
        "url": "https://shop.example.com/returns",
    },
]
ASKED = ("Do you ship to Canada?", "How do I return an unworn jumper?")


@pytest.fixture
def kb(tmp_path: Path, embedder: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A calibrated KB in ``tmp_path`` whose stored calibration refuses more than the
    settings' thresholds would (as a KB whose members' questions score low can); the CLI's
    environment points at it."""
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.chdir(tmp_path)
    for name, value in {
        "CITEWALL_DATA_DIR": str(data),
        "CITEWALL_GENERATOR": "extractive",
        "CITEWALL_RERANKER_ENABLED": "false",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CITEWALL_DATABASE_URL", raising=False)
    monkeypatch.delenv("CITEWALL_CHROMA_URL", raising=False)
    get_settings.cache_clear()
    settings = load_settings()
    kb_file = tmp_path / "kb.jsonl"
    kb_file.write_text("\n".join(json.dumps(c) for c in CARDS) + "\n", encoding="utf-8")
    report = ingest_paths([kb_file], settings, embedder=embedder, progress=False)
    assert report.calibration, report.summary()
    fitted = load_calibration(settings.calibration_dir)
    strict = Thresholds(min_dense=0.99, min_coverage=0.0)
    assert settings.abstain_min_dense < strict.min_dense
    save_calibration(settings.calibration_dir, replace(fitted, thresholds=strict))
    yield settings
    get_settings.cache_clear()


def server_statuses(settings: Any, embedder: Any) -> list[str]:
    runtime = Runtime.from_settings(settings, embedder=embedder)
    try:
        with runtime.session_factory() as session:
            _, token = users.create_user(session, "member-ask", "member")
        with TestClient(create_app(runtime)) as client:
            replies = [
                client.post(
                    "/api/v1/chat",
                    json={"message": q},
                    headers={"Authorization": f"Bearer {token}"},
                )
                for q in ASKED
            ]
    finally:
        runtime.close()
    assert all(r.status_code == 200 for r in replies), [r.text for r in replies]
    return [r.json()["answer_status"] for r in replies]


def test_the_cli_refuses_what_the_server_refuses(kb: Any, embedder: Any) -> None:
    served = server_statuses(kb, embedder)
    assert served == ["not_found"] * len(ASKED)
    runner = CliRunner()
    asked = []
    for question in ASKED:
        result = runner.invoke(app, ["ask", question, "--json"])
        assert result.exit_code == 0, result.output
        asked.append(json.loads(result.stdout)["answer_status"])
    assert asked == served
