"""`citewall ingest`: counts on stdout, refusals on stderr as file:line, exit 1 if any."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from citewall.cli.main import app
from citewall.storage import audit
from citewall.storage.schema import open_database
from ingest.kbfixtures import CARDS


def test_cli_ingest_reports_counts_and_refusals(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real command, loading the packaged embedder itself."""
    from citewall.config import get_settings

    monkeypatch.setenv("CITEWALL_DATA_DIR", str(data_dir))
    monkeypatch.delenv("CITEWALL_DATABASE_URL", raising=False)
    monkeypatch.delenv("CITEWALL_CHROMA_URL", raising=False)
    get_settings.cache_clear()
    kb = tmp_path / "kb.jsonl"
    bad = {**CARDS[2], "url": "https://user:secret@example.com/x"}
    kb.write_text("\n".join(json.dumps(c) for c in [CARDS[0], bad, CARDS[1]]) + "\n")
    try:
        result = CliRunner().invoke(app, ["ingest", str(kb), "--no-progress"])
        assert result.exit_code == 1, result.output
        assert "added 2, updated 0, unchanged 0, deleted 0, refused 1" in result.stdout
        assert f"{kb}:2: unsafe url" in result.stderr and "(field 'url')" in result.stderr
        kb.write_text("\n".join(json.dumps(c) for c in [CARDS[0], CARDS[1]]) + "\n")
        again = CliRunner().invoke(app, ["ingest", str(kb), "--no-progress"])
        assert again.exit_code == 0 and "unchanged 2" in again.stdout
        # The change to the knowledge base is one audit line; the unchanged run writes none.
        database = open_database(get_settings().sqlalchemy_url)
        try:
            with database.sessions() as session:
                lines, total = audit.entries(session, action="cards.change")
        finally:
            database.dispose()
        assert total == 1 and lines[0].via == "cli" and lines[0].actor.startswith("cli")
        assert lines[0].detail == {"added": 2, "updated": 0, "deleted": 0}
    finally:
        get_settings.cache_clear()
