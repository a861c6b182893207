"""``citewall bench crawl --via sync`` measures what it says: the first sync adds every page,
and the re-sync of the unchanged site sends a conditional GET per page, each answered 304."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from citewall.config import load_settings
from citewall.ingest.loaders import load_cards
from citewall_evals.bench.crawl import markdown_sync, run_sync
from citewall_evals.data import DEMO_CARDS


def test_the_unchanged_resync_is_all_304s(tmp_path: Path, embedder: Any) -> None:
    settings = load_settings(data_dir=tmp_path, database_url=None, chroma_url=None)
    report = run_sync(settings, demo=load_cards([DEMO_CARDS]).cards, pages=6, embedder=embedder)
    first, again = report["first_sync"], report["resync_unchanged"]
    assert (first["status"], first["added"], first["answered_304"]) == ("applied", 6, 0)
    assert first["page_requests"] == 6 and first["refused"] == []
    assert (again["status"], again["added"], again["updated"], again["removed"]) == (
        "applied",
        0,
        0,
        0,
    )
    assert again["unchanged"] == again["page_requests"] == again["answered_304"] == 6
    assert "| re-sync, nothing changed | applied | 6 | 6 |" in markdown_sync(report)
