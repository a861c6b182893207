"""``citewall ingest --site``: crawl, then ingest what the crawl made, in one run.

Nothing is written until the crawl is over, and then only through ``ingest_cards`` (its write
order keeps an interrupted run harmless). Pruning is confined to the crawled sites' id
prefixes, and to the sites whose whole page list was read: a site named by a single page, or
whose sitemap could not be read to the end, keeps every card it has. A crawl that read no
page at all (every site refused, say) has nothing to write: the embedding model, seconds to
load, is then not loaded.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from citewall.config import Settings
from citewall.ingest.crawl.canonical import Site
from citewall.ingest.crawl.ids import site_prefix
from citewall.ingest.crawl.previous import PreviousCrawl, for_audiences, read_previous
from citewall.ingest.crawl.site import CrawlResult, Refusal, crawl_sites, plan_sites
from citewall.ingest.pipeline import IngestReport, ingest_cards
from citewall.kb.audiences import audience_names
from citewall.retrieval.embedder import load_embedder
from citewall.retrieval.protocols import Embedder
from citewall.storage.schema import open_database


@dataclass(slots=True)
class SiteIngestReport:
    """A crawl and the ingest of its cards."""

    crawl: CrawlResult
    ingest: IngestReport
    #: Things the operator should know that are not refusals (a prune skipped, and why).
    notes: list[str] = field(default_factory=list)
    total_s: float = 0.0
    #: Why nothing was written (the caller's ``hold``), or None.
    held: str | None = None

    @property
    def refused(self) -> list[Refusal]:
        return [r for site in self.crawl.sites for r in site.refused]

    @property
    def duplicates(self) -> list[tuple[str, str]]:
        return [d for site in self.crawl.sites for d in site.duplicates]

    @property
    def not_modified(self) -> int:
        return sum(site.not_modified for site in self.crawl.sites)

    def summary(self) -> str:
        """One line: what changed, then where the time went, in wall time (a stage's seconds
        never exceed the crawl's, nor the crawl's the total)."""
        r, t = self.ingest, self.crawl.timings
        return (
            f"added {r.added}, updated {r.updated}, unchanged {r.unchanged} "
            f"({self.not_modified} not modified), deleted {r.deleted}, "
            f"duplicates {len(self.duplicates)}, refused {len(self.refused)} "
            f"({t.pages} pages fetched in {t.wall_s:.1f} s: fetching {t.fetch_wall_s:.1f} s, "
            f"extraction {t.extract_wall_s:.1f} s; {r.chunks_embedded} chunks embedded in "
            f"{r.embed_s:.1f} s; total {self.total_s:.1f} s)"
        )


def ingest_sites(
    entries: Sequence[str],
    settings: Settings,
    *,
    license: str | None = None,
    audiences: Sequence[str] = (),
    prune: bool = False,
    progress: bool = True,
    embedder: Embedder | None = None,
    session_factory: Callable[[], Any] | None = None,
    hold: Callable[[CrawlResult, Mapping[Site, PreviousCrawl]], str | None] | None = None,
) -> SiteIngestReport:
    """Crawl the sites ``entries`` name (sitemaps or pages) and ingest their pages as cards.

    ``hold``: given the crawl and what the KB held before it, why the crawl must not be
    written (``SiteIngestReport.held``), or None to write it.

    >>> # ingest_sites(["https://help.example.com/sitemap.xml"], load_settings()).summary()
    """
    t0 = time.perf_counter()
    plan = plan_sites(entries)
    if session_factory is None:
        session_factory = open_database(settings.sqlalchemy_url).sessions
    groups = audience_names(list(audiences))
    previous = {
        site: for_audiences(crawl, groups)
        for site, crawl in read_previous(plan, session_factory).items()
    }
    crawl = crawl_sites(
        entries,
        settings,
        license=license,
        previous=previous,
        progress=progress,
        audiences=groups,
    )
    if hold is not None and (reason := hold(crawl, previous)) is not None:
        return SiteIngestReport(crawl, IngestReport(), [reason], time.perf_counter() - t0, reason)
    notes: list[str] = []
    scope: list[str] = []
    for site in crawl.sites:
        if site.prune_blocked is None:
            scope.append(site_prefix(site.site))
        elif prune:
            notes.append(f"--prune skipped for {site.site.key}: {site.prune_blocked}")
    cards = [card for site in crawl.sites for card in site.cards]
    read_nothing = not cards and not any(site.not_modified for site in crawl.sites)
    if read_nothing and not (prune and scope):
        report = IngestReport()
    else:
        report = ingest_cards(
            cards,
            settings,
            embedder=embedder if embedder is not None else load_embedder(settings),
            session_factory=session_factory,
            prune=prune and bool(scope),
            keep_ids={card_id for site in crawl.sites for card_id in site.kept_ids},
            prune_scope=tuple(scope),
            progress=progress,
        )
    report.unchanged += sum(site.not_modified for site in crawl.sites)
    report.refused += sum(len(site.refused) for site in crawl.sites)
    return SiteIngestReport(crawl, report, notes, time.perf_counter() - t0)
