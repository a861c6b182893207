"""Sitemaps (sitemaps.org): a ``urlset`` lists pages, a ``sitemapindex`` lists sitemaps.

Parsing is strict about size and safe about XML: at most the protocol's 50,000 URLs and 50 MB
uncompressed per file (gzip included), no DTD, no entity expansion, no network. The walk
through indexes refuses a sitemap that lists itself or an ancestor (a loop) and one nested
deeper than ``MAX_DEPTH``; a sitemap listed twice elsewhere is read once.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from lxml import etree

from citewall.ingest.crawl.canonical import Site, canonical_url, off_site

#: The sitemap protocol's limits per file.
SITEMAP_MAX_BYTES = 50 * 1024 * 1024
SITEMAP_MAX_URLS = 50_000
#: Sitemap indexes within indexes read before the walk gives up (the protocol allows none).
MAX_DEPTH = 3

#: Media types a sitemap is served with; anything else named as a sitemap is read as a page.
SITEMAP_MEDIA_TYPES = frozenset(
    {"application/xml", "text/xml", "application/gzip", "application/x-gzip"}
)


class SitemapError(ValueError):
    """A sitemap that cannot be used, and why."""


@dataclass(frozen=True, slots=True)
class Sitemap:
    """One parsed sitemap file: what it is and the ``<loc>`` URLs it lists, in order."""

    kind: Literal["urlset", "sitemapindex"]
    locs: tuple[str, ...]


def looks_like_sitemap(media_type: str, body: bytes) -> bool:
    """Whether a response is a sitemap rather than a page (by media type, or gzip/XML bytes)."""
    head = body.lstrip()[:5]
    return media_type in SITEMAP_MEDIA_TYPES or body[:2] == b"\x1f\x8b" or head == b"<?xml"


def _gunzip(body: bytes) -> bytes:
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(body)) as stream:
            data = stream.read(SITEMAP_MAX_BYTES + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise SitemapError(f"not valid gzip ({exc})") from exc
    if len(data) > SITEMAP_MAX_BYTES:
        raise SitemapError(f"larger than {SITEMAP_MAX_BYTES} bytes uncompressed")
    return data


def parse_sitemap(body: bytes) -> Sitemap:
    """The sitemap in ``body`` (XML, or gzip of XML); raises ``SitemapError`` saying why not.

    >>> parse_sitemap(b'<urlset><url><loc> https://h.example/a </loc></url></urlset>').locs
    ('https://h.example/a',)
    """
    data = _gunzip(body) if body[:2] == b"\x1f\x8b" else body
    if len(data) > SITEMAP_MAX_BYTES:
        raise SitemapError(f"larger than {SITEMAP_MAX_BYTES} bytes")
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise SitemapError(f"not well-formed XML ({exc})") from exc
    kind = etree.QName(root).localname
    if kind not in {"urlset", "sitemapindex"}:
        raise SitemapError(f"root element is <{kind}>, not <urlset> or <sitemapindex>")
    entry = "url" if kind == "urlset" else "sitemap"
    locs: list[str] = []
    for child in root:
        if not isinstance(child.tag, str) or etree.QName(child).localname != entry:
            continue
        for loc in child:
            if isinstance(loc.tag, str) and etree.QName(loc).localname == "loc" and loc.text:
                locs.append(loc.text.strip())
        if len(locs) > SITEMAP_MAX_URLS:
            raise SitemapError(f"lists more than {SITEMAP_MAX_URLS} URLs (the protocol's limit)")
    return Sitemap("urlset" if kind == "urlset" else "sitemapindex", tuple(locs))


@dataclass(slots=True)
class SitemapWalk:
    """Every page a sitemap (and the sitemaps it lists) names on its site, and what was refused.

    ``complete`` is False when a sitemap could not be read or pages were left out: the list is
    then not the whole site, and pruning what it lacks would delete pages that still exist.
    """

    pages: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    complete: bool = True


def walk_sitemaps(
    url: str,
    first: Sitemap,
    site: Site,
    read: Callable[[str], Sitemap],
    *,
    max_pages: int,
    walk: SitemapWalk | None = None,
) -> SitemapWalk:
    """Walk ``first`` (read from ``url``) and the sitemaps it lists, depth first.

    ``read`` fetches and parses one sitemap, raising ``SitemapError`` with the reason when it
    cannot. Pages past ``max_pages`` (counting those ``walk`` already holds) are left out and
    reported as one refusal of ``url``.
    """
    walk = walk or SitemapWalk()
    seen_pages = set(walk.pages)
    read_once: set[str] = set()
    left_out = 0

    def visit(at: str, sitemap: Sitemap, ancestors: tuple[str, ...]) -> None:
        nonlocal left_out
        for loc in sitemap.locs:
            if reason := off_site(loc, site):
                walk.refused.append((loc, f"listed in {at}, {reason}"))
                continue
            target = canonical_url(loc)
            if sitemap.kind == "urlset":
                if target in seen_pages:
                    continue
                if len(walk.pages) >= max_pages:
                    left_out += 1
                    continue
                seen_pages.add(target)
                walk.pages.append(target)
                continue
            if target in ancestors:
                walk.refused.append((target, f"sitemap loop: listed in {at}, which it lists"))
                continue
            if target in read_once:
                continue
            if len(ancestors) >= MAX_DEPTH:
                walk.refused.append(
                    (target, f"sitemap indexes nested deeper than {MAX_DEPTH} (listed in {at})")
                )
                walk.complete = False
                continue
            read_once.add(target)
            try:
                child = read(target)
            except SitemapError as exc:
                walk.refused.append((target, f"sitemap refused: {exc}"))
                walk.complete = False
                continue
            visit(target, child, (*ancestors, target))

    start = canonical_url(url)
    read_once.add(start)
    visit(start, first, (start,))
    if left_out:
        walk.refused.append(
            (start, f"{left_out} more pages listed, past CITEWALL_CRAWL_MAX_PAGES={max_pages}")
        )
        walk.complete = False
    return walk
