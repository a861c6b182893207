"""Sitemap parsing (gzip, size, XML safety) and the walk through indexes (loops, depth)."""

from __future__ import annotations

import gzip

import pytest

from citewall.ingest.crawl.canonical import Site
from citewall.ingest.crawl.sitemap import (
    SITEMAP_MAX_BYTES,
    SITEMAP_MAX_URLS,
    Sitemap,
    SitemapError,
    parse_sitemap,
    walk_sitemaps,
)
from citewall_evals.helpsite import sitemap

SITE = Site("help.example.com")
H = "https://help.example.com"


def test_urlset_and_index_plain_and_gzipped() -> None:
    body = sitemap([f"{H}/a", f"{H}/b"])
    assert parse_sitemap(body) == Sitemap("urlset", (f"{H}/a", f"{H}/b"))
    assert parse_sitemap(gzip.compress(body)) == parse_sitemap(body)
    assert parse_sitemap(sitemap([f"{H}/s.xml"], index=True)).kind == "sitemapindex"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"<html><body>not a sitemap</body></html>", "root element is <html>"),
        (b"<urlset><url><loc>x</loc>", "not well-formed XML"),
        (b"\x1f\x8bnot gzip at all", "not valid gzip"),
    ],
)
def test_bad_sitemaps_say_why(body: bytes, reason: str) -> None:
    with pytest.raises(SitemapError, match=reason):
        parse_sitemap(body)


def test_entities_are_not_expanded_and_nothing_is_fetched() -> None:
    body = (
        b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b"<urlset><url><loc>https://help.example.com/&x;</loc></url></urlset>"
    )
    locs = parse_sitemap(body).locs
    assert all("root:" not in loc for loc in locs)


def test_oversize_sitemaps_are_refused() -> None:
    too_many = sitemap(f"{H}/p{i}" for i in range(SITEMAP_MAX_URLS + 1))
    with pytest.raises(SitemapError, match="more than 50000 URLs"):
        parse_sitemap(too_many)
    bomb = gzip.compress(b"<urlset>" + b" " * (SITEMAP_MAX_BYTES + 10) + b"</urlset>")
    with pytest.raises(SitemapError, match="uncompressed"):
        parse_sitemap(bomb)


def test_walk_refuses_loops_other_hosts_and_depth_and_reads_each_sitemap_once() -> None:
    files = {
        f"{H}/index.xml": Sitemap("sitemapindex", (f"{H}/a.xml", f"{H}/loop.xml", f"{H}/a.xml")),
        f"{H}/a.xml": Sitemap("urlset", (f"{H}/p1", f"{H}/p1#x", "https://evil.example/p")),
        f"{H}/loop.xml": Sitemap("sitemapindex", (f"{H}/index.xml", f"{H}/d1.xml")),
        f"{H}/d1.xml": Sitemap("sitemapindex", (f"{H}/d2.xml",)),
        f"{H}/d2.xml": Sitemap("sitemapindex", (f"{H}/d3.xml",)),
    }
    reads: list[str] = []

    def read(url: str) -> Sitemap:
        reads.append(url)
        return files[url]

    walk = walk_sitemaps(f"{H}/index.xml", files[f"{H}/index.xml"], SITE, read, max_pages=100)
    assert walk.pages == [f"{H}/p1"]
    reasons = dict(walk.refused)
    assert reasons["https://evil.example/p"].endswith(
        "on another host (evil.example, not help.example.com)"
    )
    assert reasons[f"{H}/index.xml"].startswith("sitemap loop")
    assert "nested deeper than 3" in reasons[f"{H}/d2.xml"]
    assert reads == [f"{H}/a.xml", f"{H}/loop.xml", f"{H}/d1.xml"]
    assert walk.complete is False  # the too-deep sitemap was not read


def test_walk_past_max_pages_is_one_refusal_and_incomplete() -> None:
    first = Sitemap("urlset", tuple(f"{H}/p{i}" for i in range(10)))
    walk = walk_sitemaps(f"{H}/s.xml", first, SITE, lambda u: first, max_pages=4)
    assert len(walk.pages) == 4 and not walk.complete
    assert walk.refused == [(f"{H}/s.xml", "6 more pages listed, past CITEWALL_CRAWL_MAX_PAGES=4")]
