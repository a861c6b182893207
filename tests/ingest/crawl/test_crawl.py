"""The crawl against a real HTTP server on 127.0.0.1: what becomes a card, what is refused and
why, politeness, and the private-address policy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from citewall.config import Settings, load_settings
from citewall.ingest.crawl.robots import parse_robots
from citewall.ingest.crawl.site import CrawlResult, crawl_sites
from citewall_evals.helpsite import HelpSite
from ingest.crawl.helpcenter import ARTICLES, help_center


@pytest.fixture(scope="module")
def site() -> Iterator[HelpSite]:
    with help_center() as server:
        yield server


def crawl_settings(tmp: Path, **overrides: object) -> Settings:
    base: dict[str, object] = {
        "data_dir": tmp,
        "crawl_allow_private": True,
        "crawl_timeout_s": 0.5,
        "crawl_delay_s": 0.0,
        "crawl_max_bytes": 20_000,
    }
    return load_settings(**(base | overrides))


@pytest.fixture(scope="module")
def crawled(site: HelpSite, tmp_path_factory: pytest.TempPathFactory) -> CrawlResult:
    settings = crawl_settings(tmp_path_factory.mktemp("crawl"))
    return crawl_sites(
        [site.url("/sitemap.xml")], settings, license="CC-BY-4.0", previous={}, progress=False
    )


def test_articles_become_external_cards_at_their_final_url(
    crawled: CrawlResult, site: HelpSite
) -> None:
    (result,) = crawled.sites
    cards = {c.url: c for c in result.cards}
    expected = {site.url(p) for p in ARTICLES} | {site.url("/guides/api-keys")}
    assert set(cards) == expected  # the same-host redirect's target, under its own URL
    for path, (title, _) in ARTICLES.items():
        card = cards[site.url(path)]
        assert card.title == title and card.is_external and card.license == "CC-BY-4.0"
        assert card.id.startswith("site-127-0-0-1-") and card.id.endswith(card.id[-12:])
    void = cards[site.url("/guides/void-a-label")]
    assert "within 30 days" in void.body and "## When the refund arrives" in void.body
    assert "Popular articles" not in void.body and "Copyright" not in void.body  # boilerplate
    assert set(void.metadata) == {
        "crawl_site",
        "crawl_requested",
        "crawl_etag",
        "crawl_last_modified",
    }
    api = cards[site.url("/guides/api-keys")]
    assert api.metadata["crawl_requested"] == site.url("/guides/moved")


def test_every_refusal_names_the_url_and_the_reason(crawled: CrawlResult, site: HelpSite) -> None:
    (result,) = crawled.sites
    reasons = {r.url: r.reason for r in result.refused}
    huge = len(site.routes["/guides/huge"].body)
    assert reasons == {
        site.url("/guides/away"): (
            f"redirects to {site.url('/guides/reprint', host='localhost')}, on another host "
            f"(localhost:{site.port}, not 127.0.0.1:{site.port})"
        ),
        site.url("/guides/missing"): "HTTP 404 (Not Found)",
        site.url("/internal/notes"): "disallowed by robots.txt",
        site.url("/files/manual.pdf"): "not an HTML page (content type application/pdf)",
        site.url("/guides/huge"): f"larger than 20000 bytes (Content-Length {huge})",
        site.url("/guides/slow"): "timed out after 0.5 s",
        "https://elsewhere.example/page": (
            f"listed in {site.url('/sitemaps/more.xml')}, on another host "
            f"(elsewhere.example, not 127.0.0.1:{site.port})"
        ),
        site.url("/sitemap.xml"): (
            f"sitemap loop: listed in {site.url('/sitemaps/loop.xml')}, which it lists"
        ),
    }
    assert result.duplicates == [
        (site.url("/guides/refunds?utm_source=mail"), site.url("/guides/refunds"))
    ]
    assert result.prune_blocked is None  # every sitemap was read: pruning is safe
    assert not site.hits("/internal/notes")  # robots.txt is obeyed before any request


def test_timings_are_measured(crawled: CrawlResult) -> None:
    t = crawled.timings
    assert t.pages >= 6 and t.fetch_s > 0 and t.extract_s > 0 and t.wall_s > 0
    # Wall time per stage: never more than the crawl's, whatever the threads overlapped.
    assert 0 < t.fetch_wall_s <= t.wall_s and 0 < t.extract_wall_s <= t.wall_s


def test_private_addresses_are_refused_unless_allowed(site: HelpSite, tmp_path: Path) -> None:
    settings = crawl_settings(tmp_path, crawl_allow_private=False)
    before = len(site.requests)
    result = crawl_sites(
        [site.url("/sitemap.xml")], settings, license=None, previous={}, progress=False
    )
    (only,) = result.sites
    assert not only.cards and len(site.requests) == before  # no request ever left
    (refusal,) = only.refused
    assert "loopback address 127.0.0.1" in refusal.reason
    assert only.prune_blocked is not None


def test_a_single_page_entry_is_read_but_blocks_pruning(site: HelpSite, tmp_path: Path) -> None:
    result = crawl_sites(
        [site.url("/guides/reprint")],
        crawl_settings(tmp_path),
        license=None,
        previous={},
        progress=False,
    )
    (only,) = result.sites
    assert [c.url for c in only.cards] == [site.url("/guides/reprint")]
    assert only.prune_blocked and "is a page, not a sitemap" in only.prune_blocked


def test_robots_delay_and_disallow() -> None:
    rules = parse_robots(
        b"User-agent: *\nCrawl-delay: 2\nDisallow: /private/\n", "citewall-crawler/0.1"
    )
    assert rules.delay_s() == 2.0
    assert rules.refusal("https://h.example/private/x") == "disallowed by robots.txt"
    assert rules.refusal("https://h.example/ok") is None
