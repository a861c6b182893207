"""How fast ``citewall ingest --site`` crawls a help center, and where the time goes.

A local help center (``evals.helpsite``, on 127.0.0.1) serves N generated pages: each a demo
KB title over text recombined from demo bodies (``corpus.synthetic_cards``: two cards per page,
as paragraphs under a heading), inside the navigation, sidebar and footer real help pages
have, listed by a sitemap index of two sitemaps. Three runs through the production code:

1. crawl alone with one thread (``crawl_sites``): fetching and extraction add up to the wall
   time, so their split is exact;
2. the full ingest into an empty data dir with ``crawl_concurrency`` threads
   (``ingest_sites``): pages/s, and fetching, extraction, embedding and the rest;
3. the same ingest again: every page answers 304 to the conditional GET, nothing is embedded.

``run_sync`` measures the registered-source path instead (``citewall sync``,
``ingest.sync.sync_source``): the site registered as a source, its first sync into an empty
data dir, then a sync of the unchanged site (every page 304), side by side.
"""

from __future__ import annotations

import html
import re
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from citewall.config import Settings
from citewall.ingest.crawl.run import SiteIngestReport, ingest_sites
from citewall.ingest.crawl.site import crawl_sites
from citewall.ingest.sync import sync_source
from citewall.kb.card import Card
from citewall.retrieval.protocols import Embedder
from citewall.storage import kb_sources
from citewall.storage.kb_sources import SyncRun
from citewall.storage.schema import open_database
from citewall.storage.types import utcnow
from citewall_evals.bench.corpus import synthetic_cards
from citewall_evals.helpsite import XML, HelpSite, Request, Route, page, sitemap


def help_pages(demo: Sequence[Card], n: int) -> dict[str, Route]:
    """``n`` help pages at ``/articles/<i>-<slug>``, two synthetic cards' text each."""
    cards = synthetic_cards(demo, 2 * n)
    routes = {}
    for i in range(n):
        first, second = cards[2 * i], cards[2 * i + 1]
        slug = "-".join(re.findall(r"[a-z0-9]+", first.title.lower())[:5])
        main = (
            f"<p>{html.escape(first.body)}</p><h2>{html.escape(second.title)}</h2>"
            f"<p>{html.escape(second.body)}</p>"
        )
        routes[f"/articles/{i}-{slug}"] = Route(page(first.title, main))
    return routes


def serve_help_center(demo: Sequence[Card], n: int) -> HelpSite:
    """A started help center of ``n`` pages behind a sitemap index at ``/sitemap.xml``."""
    site = HelpSite()
    pages = help_pages(demo, n)
    paths = sorted(pages)
    half = len(paths) // 2
    site.routes.update(pages)
    site.routes.update(
        {
            "/robots.txt": Route(b"User-agent: *\nDisallow: /search\n", "text/plain"),
            "/sitemap.xml": Route(
                sitemap([site.url("/sitemap-1.xml"), site.url("/sitemap-2.xml")], index=True),
                XML,
            ),
            "/sitemap-1.xml": Route(sitemap(site.url(p) for p in paths[:half]), XML),
            "/sitemap-2.xml": Route(sitemap(site.url(p) for p in paths[half:]), XML),
        }
    )
    return site


def _ingest(entry: str, settings: Settings, embedder: Embedder) -> SiteIngestReport:
    return ingest_sites(
        [entry],
        settings,
        license="CC-BY-4.0",
        progress=False,
        embedder=embedder,
        session_factory=open_database(settings.sqlalchemy_url).sessions,
    )


def _split(report: SiteIngestReport) -> dict[str, Any]:
    t, r = report.crawl.timings, report.ingest
    return {
        "pages_fetched": t.pages,
        "cards_added": r.added,
        "not_modified": report.not_modified,
        "refused": [f"{r.url}: {r.reason}" for r in report.refused],
        "chunks_embedded": r.chunks_embedded,
        "sentences_embedded": r.sentences_embedded,
        "total_s": round(report.total_s, 2),
        "pages_per_s": round(t.pages / report.total_s, 1) if report.total_s else None,
        "crawl_wall_s": round(t.wall_s, 2),
        "fetch_thread_s": round(t.fetch_s, 2),
        "extract_thread_s": round(t.extract_s, 2),
        "embed_s": round(r.embed_s, 2),
        "rest_s": round(report.total_s - t.wall_s - r.embed_s, 2),
    }


#: A loopback site, and a scratch data dir of its own (never the configured database).
_LOCAL: dict[str, Any] = {
    "crawl_allow_private": True,
    "crawl_delay_s": 0.0,
    "database_url": None,
    "chroma_url": None,
}


def run(
    settings: Settings, *, demo: Sequence[Card], pages: int, embedder: Embedder
) -> dict[str, Any]:
    """The three runs of the module docstring, on ``settings`` with its crawl settings."""
    with serve_help_center(demo, pages) as site, tempfile.TemporaryDirectory() as tmp:
        entry = site.url("/sitemap.xml")
        serial = settings.model_copy(
            update={**_LOCAL, "crawl_concurrency": 1, "data_dir": Path(tmp) / "serial"}
        )
        crawl = crawl_sites([entry], serial, license=None, previous={}, progress=False)
        t = crawl.timings
        data = settings.model_copy(update={**_LOCAL, "data_dir": Path(tmp) / "data"})
        data.data_dir.mkdir()
        first = _ingest(entry, data, embedder)
        again = _ingest(entry, data, embedder)
    return {
        "pages": pages,
        "concurrency": settings.crawl_concurrency,
        "crawl_one_thread": {
            "pages_fetched": t.pages,
            "wall_s": round(t.wall_s, 2),
            "pages_per_s": round(t.pages / t.wall_s, 1),
            "fetch_s": round(t.fetch_s, 2),
            "extract_s": round(t.extract_s, 2),
            "other_s": round(t.wall_s - t.fetch_s - t.extract_s, 2),
            "fetch_ms_per_page": round(1000 * t.fetch_s / max(t.pages, 1), 2),
            "extract_ms_per_page": round(1000 * t.extract_s / max(t.pages, 1), 2),
        },
        "first_ingest": _split(first),
        "reingest_not_modified": _split(again),
    }


def _sync_split(run: SyncRun, wall_s: float, answered: Sequence[Request]) -> dict[str, Any]:
    pages = [r for r in answered if r.path.startswith("/articles/")]
    return {
        "page_requests": len(pages),
        "answered_304": sum(r.status == 304 for r in pages),
        "status": run.status,
        "added": run.added,
        "updated": run.updated,
        "unchanged": run.unchanged,
        "removed": run.removed,
        "refused": [f"{r.where}: {r.reason}" for r in run.refusals],
        "sync_s": round(run.duration_s, 2),
        "wall_s": round(wall_s, 2),
    }


def run_sync(
    settings: Settings, *, demo: Sequence[Card], pages: int, embedder: Embedder
) -> dict[str, Any]:
    """The site registered as a source (no schedule), synced into an empty data dir, then
    synced again unchanged; each run's counts, the page requests the site answered (and how
    many with 304), its recorded duration and the wall time of the call (which adds recording
    the run)."""
    with serve_help_center(demo, pages) as site, tempfile.TemporaryDirectory() as tmp:
        entry = site.url("/sitemap.xml")
        data = settings.model_copy(update={**_LOCAL, "data_dir": Path(tmp) / "data"})
        data.data_dir.mkdir()
        sessions = open_database(data.sqlalchemy_url).sessions
        with sessions() as session:
            source = kb_sources.add_source(
                session, "site", entry, license="CC-BY-4.0", now=utcnow()
            )
        runs = []
        for _ in range(2):
            seen, t0 = len(site.requests), time.perf_counter()
            done = sync_source(source.id, data, session_factory=sessions, embedder=embedder)
            wall_s = time.perf_counter() - t0
            runs.append(_sync_split(done, wall_s, site.requests[seen:]))
    return {
        "pages": pages,
        "concurrency": settings.crawl_concurrency,
        "first_sync": runs[0],
        "resync_unchanged": runs[1],
    }


def markdown_sync(report: dict[str, Any]) -> str:
    rows = [
        f"| {label} | {r['status']} | {r['page_requests']} | {r['answered_304']} | "
        f"{r['added']} | {r['updated']} | {r['unchanged']} | {r['removed']} | "
        f"{len(r['refused'])} | {r['sync_s']} | {r['wall_s']} |"
        for label, r in (
            ("first sync (empty KB)", report["first_sync"]),
            ("re-sync, nothing changed", report["resync_unchanged"]),
        )
    ]
    return "\n".join(
        [
            f"# Syncing a registered {report['pages']}-page help center (loopback)",
            "",
            f"`citewall sync ID` (`sync_source`) with {report['concurrency']} crawl threads; the "
            "sync's recorded duration and the wall time of the call:",
            "",
            "| run | status | page GETs | 304 | added | updated | unchanged | removed | refused "
            "| sync s | wall s |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    )


def markdown(report: dict[str, Any]) -> str:
    one, first, again = (
        report["crawl_one_thread"],
        report["first_ingest"],
        report["reingest_not_modified"],
    )
    rows = [
        f"| first ingest | {first['pages_fetched']} | {first['total_s']} | "
        f"{first['pages_per_s']} | {first['crawl_wall_s']} | {first['fetch_thread_s']} | "
        f"{first['extract_thread_s']} | {first['embed_s']} | {first['rest_s']} |",
        f"| re-ingest (all 304) | {again['pages_fetched']} | {again['total_s']} | "
        f"{again['pages_per_s']} | {again['crawl_wall_s']} | {again['fetch_thread_s']} | "
        f"{again['extract_thread_s']} | {again['embed_s']} | {again['rest_s']} |",
    ]
    return "\n".join(
        [
            f"# Crawling a {report['pages']}-page help center (loopback)",
            "",
            f"Crawl alone, one thread: {one['pages_fetched']} pages in {one['wall_s']} s "
            f"({one['pages_per_s']} pages/s): fetching {one['fetch_s']} s "
            f"({one['fetch_ms_per_page']} ms/page), extraction {one['extract_s']} s "
            f"({one['extract_ms_per_page']} ms/page), the rest {one['other_s']} s.",
            "",
            f"`citewall ingest --site` with {report['concurrency']} threads (fetch and extract "
            "columns are summed over threads; the rest is chunking, BM25, the cards table):",
            "",
            "| run | pages | total s | pages/s | crawl wall s | fetch s | extract s | "
            "embed s | rest s |",
            "|---|---|---|---|---|---|---|---|---|",
            *rows,
            "",
            f"First ingest: {first['cards_added']} cards, {first['chunks_embedded']} chunks and "
            f"{first['sentences_embedded']} sentences embedded. Re-ingest: "
            f"{again['not_modified']} pages not modified, {again['chunks_embedded']} embedded.",
            "",
        ]
    )
