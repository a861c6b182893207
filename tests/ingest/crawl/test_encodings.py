"""Compressed responses: gzip and deflate are inflated no further than the page cap, any other
Content-Encoding is refused unread, and a compression bomb costs neither memory nor the run."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib
from pathlib import Path

import zstandard

from citewall.config import load_settings
from citewall.ingest.crawl.site import crawl_sites
from citewall_evals.helpsite import HelpSite, Route, page, sitemap
from ingest.crawl.helpcenter import API_KEYS, REFUNDS, VOID

MAX_BYTES = 1_000_000
#: What each bomb inflates to: a hundred times the cap or more, from about 100 KB on the wire.
BOMB = b"\0" * (100 * 1024 * 1024)


def _raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


def _encoded(body: bytes, coding: str) -> Route:
    return Route(body, headers=(("Content-Encoding", coding),))


def test_bombs_are_refused_within_the_cap_and_the_run_goes_on(tmp_path: Path) -> None:
    bombs = {
        "/bomb/gzip": _encoded(gzip.compress(BOMB, 9), "gzip"),
        "/bomb/deflate": _encoded(zlib.compress(BOMB, 9), "deflate"),
        "/bomb/raw-deflate": _encoded(_raw_deflate(BOMB), "deflate"),
        "/bomb/zstd": _encoded(zstandard.ZstdCompressor(level=19).compress(BOMB), "zstd"),
    }
    assert all(len(route.body) < 150_000 for route in bombs.values())
    with HelpSite() as site:
        site.routes.update(bombs)
        site.routes.update(
            {
                "/void": _encoded(gzip.compress(page("Void a shipping label", VOID)), "gzip"),
                "/refunds": _encoded(zlib.compress(page("Refund an order", REFUNDS)), "deflate"),
                "/keys": Route(page("Manage API keys", API_KEYS)),
                "/sitemap.xml": _encoded(
                    gzip.compress(
                        sitemap([site.url(p) for p in ["/void", "/refunds", "/keys", *bombs]])
                    ),
                    "gzip",
                ),
            }
        )
        settings = load_settings(
            data_dir=tmp_path,
            crawl_allow_private=True,
            crawl_delay_s=0.0,
            crawl_concurrency=1,
            crawl_max_bytes=MAX_BYTES,
        )
        tracemalloc.start()
        try:
            result = crawl_sites(
                [site.url("/sitemap.xml")], settings, license=None, previous={}, progress=False
            )
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        accepted = {r.accept_encoding for r in site.requests}
    # Each bomb inflates to 100 MB or more; the crawl never holds much more than the cap.
    assert peak < 12 * MAX_BYTES, f"tracemalloc peak {peak / 1e6:.1f} MB"
    (only,) = result.sites
    assert sorted(c.url for c in only.cards) == sorted(
        site.url(p) for p in ["/void", "/refunds", "/keys"]
    )
    inflated = f"larger than {MAX_BYTES} bytes once inflated (Content-Encoding "
    assert {r.url: r.reason for r in only.refused} == {
        site.url("/bomb/gzip"): inflated + "gzip)",
        site.url("/bomb/deflate"): inflated + "deflate)",
        site.url("/bomb/raw-deflate"): inflated + "deflate)",
        site.url("/bomb/zstd"): (
            "Content-Encoding 'zstd' refused: the crawler asks for gzip, deflate only"
        ),
    }
    assert accepted == {"gzip, deflate"}
