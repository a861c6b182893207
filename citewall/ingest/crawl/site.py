"""The crawl: ``--site`` entries in, cards and refusals (each with its URL and reason) out.

Per site: robots.txt first, then each entry (a sitemap, or a single page), then every page the
sitemaps list, fetched by ``crawl_concurrency`` threads behind the per-host delay. A page
becomes a card when it is HTML with a title and main content; a 304 to the conditional GET
keeps the stored card as it is (nothing fetched, extracted or embedded again). Pages with the
same content (title and body) are one card: the one already stored, else the URL the pages
declare canonical, else the shortest URL. A card's ``url`` is always a URL the crawler
fetched on the site, after redirects; its ``license`` comes from the caller.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from pydantic import ValidationError
from tqdm import tqdm

from citewall.config import Settings
from citewall.errors import IngestError
from citewall.ingest.crawl.canonical import Site, canonical_url, site_of, url_refusal
from citewall.ingest.crawl.extract import ExtractedPage, NotExtractable, extract_page
from citewall.ingest.crawl.fetcher import Fetched, Fetcher, FetchRefused, Limits
from citewall.ingest.crawl.ids import page_card_id
from citewall.ingest.crawl.pacing import HostPacer
from citewall.ingest.crawl.previous import PreviousCrawl, StoredPage, crawl_metadata
from citewall.ingest.crawl.robots import RobotsRules, allow_all, parse_robots, unreachable
from citewall.ingest.crawl.sitemap import (
    SITEMAP_MAX_BYTES,
    Sitemap,
    SitemapError,
    SitemapWalk,
    looks_like_sitemap,
    parse_sitemap,
    walk_sitemaps,
)
from citewall.ingest.crawl.timings import CrawlTimings
from citewall.ingest.crawl.transport import crawl_client
from citewall.kb.card import Card

#: What a page must be served as to be read as one.
HTML_MEDIA_TYPES = frozenset({"text/html", "application/xhtml+xml"})


@dataclass(frozen=True, slots=True)
class Refusal:
    """A URL that gave no card, and why. ``gone``: the site says the page no longer exists."""

    url: str
    reason: str
    gone: bool = False


@dataclass(frozen=True, slots=True)
class _Fresh:
    requested: str
    fetched: Fetched
    page: ExtractedPage


@dataclass(frozen=True, slots=True)
class _NotModified:
    requested: str
    stored: StoredPage


_Outcome = _Fresh | _NotModified | Refusal


@dataclass(slots=True)
class SiteCrawl:
    """What the crawl of one site produced."""

    site: Site
    cards: list[Card] = field(default_factory=list)
    #: Stored cards that stay as they are: not modified, or refused for a reason that says
    #: nothing about the page being gone (a timeout, a 5xx).
    kept_ids: set[str] = field(default_factory=set)
    not_modified: int = 0
    #: ``(requested URL, URL of the card it duplicates)``.
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    #: Why pruning this site's vanished pages would be unsafe (the list is incomplete), or None.
    prune_blocked: str | None = None
    #: How many pages the site's entries listed (its sitemaps' pages, and entry pages).
    listed: int = 0


@dataclass(slots=True)
class CrawlResult:
    sites: list[SiteCrawl]
    timings: CrawlTimings


def plan_sites(entries: Sequence[str]) -> dict[Site, list[str]]:
    """The entries grouped by site, in order; raises ``IngestError`` naming a bad entry."""
    plan: dict[Site, list[str]] = {}
    for entry in (e.strip() for e in entries):
        try:
            site = site_of(entry)
        except ValueError as exc:
            problem = url_refusal(entry) or str(exc)
            raise IngestError(f"not a URL the crawler can read: {problem}", path=entry) from None
        urls = plan.setdefault(site, [])
        if (url := canonical_url(entry)) not in urls:
            urls.append(url)
    if not plan:
        raise IngestError("no --site URL given")
    return plan


@dataclass(slots=True)
class _SiteRun:
    """One site's state while it is crawled."""

    site: Site
    previous: PreviousCrawl
    robots: RobotsRules
    walk: SitemapWalk = field(default_factory=SitemapWalk)
    outcomes: list[_Outcome] = field(default_factory=list)
    entry_pages: set[str] = field(default_factory=set)
    prune_blocked: str | None = None


class _Crawler:
    def __init__(self, fetcher: Fetcher, settings: Settings, timings: CrawlTimings) -> None:
        self.fetcher = fetcher
        self.settings = settings
        self.timings = timings
        self.limits = Limits(settings.crawl_max_bytes, settings.crawl_timeout_s)
        self._lock = threading.Lock()  # the timings are added to by every crawl thread

    def robots(self, site: Site, entry: str) -> RobotsRules:
        """The site's robots.txt (at the first entry's scheme and host), per RFC 9309."""
        agent = self.settings.crawl_user_agent
        parts = urlsplit(entry)
        url = urlunsplit((parts.scheme, parts.netloc, "/robots.txt", "", ""))
        try:
            fetched = self.fetcher.get(url, site, self.limits, robots=None)
        except FetchRefused as exc:
            if exc.status is not None and 400 <= exc.status < 500:
                return allow_all(agent)
            return unreachable(agent, exc.reason)
        return parse_robots(fetched.body, agent)

    def page(self, run: _SiteRun, url: str) -> _Outcome:
        stored = run.previous.pages.get(url)
        try:
            fetched = self.fetcher.get(
                url,
                run.site,
                self.limits,
                robots=run.robots,
                validators=stored.validators if stored else None,
            )
        except FetchRefused as exc:
            return Refusal(url, exc.reason, exc.gone)
        return self.response(url, fetched, stored)

    def response(self, url: str, fetched: Fetched, stored: StoredPage | None) -> _Outcome:
        now = time.perf_counter()
        with self._lock:
            self.timings.fetched(now - fetched.seconds, now)
            self.timings.pages += 1
        if fetched.not_modified and stored is not None:
            return _NotModified(url, stored)
        if fetched.media_type not in HTML_MEDIA_TYPES:
            shown = fetched.media_type or "none given"
            return Refusal(url, f"not an HTML page (content type {shown})")
        t0 = time.perf_counter()
        try:
            page = extract_page(fetched.body, fetched.url, fetched.charset)
        except NotExtractable as exc:
            return Refusal(url, str(exc))
        finally:
            t1 = time.perf_counter()
            with self._lock:
                self.timings.extracted(t0, t1)
        return _Fresh(url, fetched, page)

    def sitemap(self, run: _SiteRun, url: str) -> Sitemap:
        try:
            fetched = self.fetcher.get(
                url, run.site, Limits(SITEMAP_MAX_BYTES, self.limits.timeout_s), robots=run.robots
            )
        except FetchRefused as exc:
            raise SitemapError(exc.reason) from None
        return parse_sitemap(fetched.body)

    def entry(self, run: _SiteRun, url: str, budget: int) -> None:
        """Read one ``--site`` entry: a sitemap (walked) or a single page."""
        stored = run.previous.pages.get(url)
        largest = max(SITEMAP_MAX_BYTES, self.limits.max_bytes)
        sitemap_limits = Limits(largest, self.limits.timeout_s)
        try:
            fetched = self.fetcher.get(
                url,
                run.site,
                sitemap_limits,
                robots=run.robots,
                validators=stored.validators if stored else None,
            )
        except FetchRefused as exc:
            run.outcomes.append(Refusal(url, exc.reason, exc.gone))
            run.prune_blocked = f"{url} could not be read"
            return
        if fetched.not_modified or not looks_like_sitemap(fetched.media_type, fetched.body):
            if len(fetched.body) > self.limits.max_bytes:
                run.outcomes.append(Refusal(url, f"larger than {self.limits.max_bytes} bytes"))
            else:
                run.outcomes.append(self.response(url, fetched, stored))
            run.entry_pages.add(url)
            run.prune_blocked = f"{url} is a page, not a sitemap listing the whole site"
            return
        try:
            first = parse_sitemap(fetched.body)
        except SitemapError as exc:
            run.outcomes.append(Refusal(url, f"sitemap refused: {exc}"))
            run.prune_blocked = f"{url} could not be read"
            return
        walk_sitemaps(
            url,
            first,
            run.site,
            lambda child: self.sitemap(run, child),
            max_pages=len(run.walk.pages) + budget,
            walk=run.walk,
        )


def crawl_sites(
    entries: Sequence[str],
    settings: Settings,
    *,
    license: str | None,
    previous: Mapping[Site, PreviousCrawl],
    progress: bool = True,
    audiences: tuple[str, ...] = (),
) -> CrawlResult:
    """Crawl every site the ``entries`` name (module docstring); nothing is written here."""
    t_start = time.perf_counter()
    plan = plan_sites(entries)
    timings = CrawlTimings()
    pacer = HostPacer(settings.crawl_delay_s)
    client = crawl_client(
        allow_private=settings.crawl_allow_private,
        allow_link_local=settings.crawl_allow_link_local,
        max_connections=settings.crawl_concurrency,
        timeout_s=settings.crawl_timeout_s,
        user_agent=settings.crawl_user_agent,
    )
    with client:
        crawler = _Crawler(Fetcher(client, pacer), settings, timings)
        runs: list[_SiteRun] = []
        budget = settings.crawl_max_pages
        for site, site_entries in plan.items():
            empty = PreviousCrawl({}, frozenset())
            robots = crawler.robots(site, site_entries[0])
            if (delay := robots.delay_s()) is not None:
                pacer.ask_at_least(site.key, delay)
            run = _SiteRun(site, previous.get(site, empty), robots)
            if robots.unreachable is not None:
                run.prune_blocked = "robots.txt could not be read"
            for entry in site_entries:
                crawler.entry(run, entry, budget)
                budget = settings.crawl_max_pages - sum(len(r.walk.pages) for r in [*runs, run])
            if not run.walk.complete:
                run.prune_blocked = run.prune_blocked or "the sitemaps were not read to the end"
            run.outcomes.extend(Refusal(url, reason) for url, reason in run.walk.refused)
            runs.append(run)
        jobs = [(run, url) for run in runs for url in run.walk.pages if url not in run.entry_pages]
        with (
            ThreadPoolExecutor(settings.crawl_concurrency, thread_name_prefix="crawl") as pool,
            tqdm(total=len(jobs), unit="page", desc="crawling", disable=not progress) as bar,
        ):
            futures = {pool.submit(crawler.page, run, url): run for run, url in jobs}
            for future in as_completed(futures):
                futures[future].outcomes.append(future.result())
                bar.update(1)
    sites = [_assemble(run, license, audiences) for run in runs]
    timings.wall_s = time.perf_counter() - t_start
    return CrawlResult(sites, timings)


def _winner(members: list[_Fresh]) -> _Fresh:
    """Among pages with the same content: the one they declare canonical, else the shortest
    URL; among requests that reached it, the one that asked for it directly. The choice does
    not depend on the order the pages were fetched in."""
    declared = set()
    for m in members:
        if m.page.canonical is not None:
            try:
                declared.add(canonical_url(m.page.canonical))
            except ValueError:
                continue
    named = [m for m in members if m.fetched.url in declared]
    return min(
        named or members,
        key=lambda m: (
            len(m.fetched.url),
            m.fetched.url,
            m.requested != m.fetched.url,
            m.requested,
        ),
    )


def _assemble(run: _SiteRun, license: str | None, audiences: tuple[str, ...]) -> SiteCrawl:
    """The cards, kept ids, duplicates and refusals of one site's outcomes."""
    listed = len(set(run.walk.pages) | run.entry_pages)
    result = SiteCrawl(run.site, prune_blocked=run.prune_blocked, listed=listed)
    result.kept_ids |= run.previous.foreign_ids
    groups: dict[str, list[_Fresh]] = {}
    kept_by_digest: dict[str, StoredPage] = {}
    for outcome in run.outcomes:
        if isinstance(outcome, Refusal):
            result.refused.append(outcome)
            stored = run.previous.pages.get(outcome.url)
            if stored is not None and not outcome.gone:
                result.kept_ids.add(stored.card_id)
        elif isinstance(outcome, _NotModified):
            result.not_modified += 1
            result.kept_ids.add(outcome.stored.card_id)
            kept_by_digest.setdefault(outcome.stored.digest, outcome.stored)
        else:
            groups.setdefault(outcome.page.digest, []).append(outcome)
    made: set[str] = set()
    for digest, members in sorted(groups.items(), key=lambda kv: kv[1][0].fetched.url):
        if (kept := kept_by_digest.get(digest)) is not None:
            result.duplicates.extend((m.requested, kept.url) for m in members)
            continue
        best = _winner(members)
        result.duplicates.extend((m.requested, best.fetched.url) for m in members if m is not best)
        card_id = page_card_id(run.site, best.fetched.url)
        if card_id in made or card_id in result.kept_ids:
            result.duplicates.append((best.requested, best.fetched.url))
            continue
        try:
            card = Card(
                id=card_id,
                title=best.page.title,
                body=best.page.body,
                url=best.fetched.url,
                license=license,
                audiences=audiences,
                metadata=crawl_metadata(run.site, best.requested, best.fetched.validators),
            )
        except ValidationError as exc:
            reason = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            result.refused.append(Refusal(best.requested, f"not a valid card ({reason})"))
            if (stored := run.previous.pages.get(best.requested)) is not None:
                result.kept_ids.add(stored.card_id)
            continue
        made.add(card_id)
        result.cards.append(card)
    result.refused.sort(key=lambda r: r.url)
    return result
