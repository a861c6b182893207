"""The benchmark's generated help pages: distinct, safe URLs (a page lost to a bad URL would
change what the crawl benchmark measures)."""

from __future__ import annotations

from citewall.ingest.crawl.canonical import canonical_url
from citewall.ingest.loaders import load_cards
from citewall_evals.bench.crawl import help_pages
from citewall_evals.data import DEMO_CARDS


def test_generated_pages_have_distinct_canonical_paths() -> None:
    pages = help_pages(load_cards([DEMO_CARDS]).cards, 200)
    urls = {canonical_url(f"http://127.0.0.1:8000{path}") for path in pages}
    assert len(urls) == 200
    assert all(url.endswith(path) for url, path in zip(sorted(urls), sorted(pages), strict=True))
