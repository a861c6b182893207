"""What an earlier crawl of a site stored, read back from the cards table.

A crawled card's free ``metadata`` carries what the next crawl needs: the site, the URL that
was requested (a sitemap ``<loc>``, which may have redirected to the card's ``url``) and the
validators the server sent (``ETag``, ``Last-Modified``) for a conditional GET. None of these
keys is in the serve boundary's metadata allowlist: a member never sees them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from citewall.ingest.crawl.canonical import Site
from citewall.ingest.crawl.extract import content_digest
from citewall.ingest.crawl.fetcher import Validators
from citewall.ingest.crawl.ids import site_prefix
from citewall.storage.cards import cards_with_id_prefix
from citewall.storage.models import CardRow

#: Metadata keys of a crawled card (all internal to ingest; none is shown to a member).
META_SITE = "crawl_site"
META_REQUESTED = "crawl_requested"
META_ETAG = "crawl_etag"
META_LAST_MODIFIED = "crawl_last_modified"
CRAWL_METADATA_KEYS = frozenset({META_SITE, META_REQUESTED, META_ETAG, META_LAST_MODIFIED})


def crawl_metadata(site: Site, requested: str, validators: Validators) -> dict[str, Any]:
    """The metadata a crawled card is stored with (validators only when the server sent them)."""
    meta: dict[str, Any] = {META_SITE: site.key, META_REQUESTED: requested}
    if validators.etag:
        meta[META_ETAG] = validators.etag
    if validators.last_modified:
        meta[META_LAST_MODIFIED] = validators.last_modified
    return meta


@dataclass(frozen=True, slots=True)
class StoredPage:
    """A page an earlier crawl made a card of."""

    card_id: str
    url: str
    validators: Validators
    #: ``extract.content_digest`` of the stored title and body (duplicates of a 304 page).
    digest: str
    #: The stored card's audiences (``--audience``).
    audiences: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PreviousCrawl:
    """A site's cards from earlier crawls, by the URL that was requested, and the ids under
    the site's prefix that the crawler did not write (never to be pruned by it)."""

    pages: Mapping[str, StoredPage]
    foreign_ids: frozenset[str]


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def previous_from_rows(site: Site, rows: Iterable[CardRow]) -> PreviousCrawl:
    """Read ``rows`` (the cards under ``site``'s prefix) as an earlier crawl of ``site``.

    A row counts as the crawler's only if it is external and its metadata names this site;
    any other row under the prefix (an id written by hand) is foreign and kept.
    """
    pages: dict[str, StoredPage] = {}
    foreign: set[str] = set()
    for row in rows:
        meta = row.meta if isinstance(row.meta, dict) else {}
        requested = _text(meta.get(META_REQUESTED))
        if not row.is_external or row.url is None or meta.get(META_SITE) != site.key:
            foreign.add(row.id)
            continue
        validators = Validators(
            etag=_text(meta.get(META_ETAG)), last_modified=_text(meta.get(META_LAST_MODIFIED))
        )
        pages[requested or row.url] = StoredPage(
            row.id,
            row.url,
            validators,
            content_digest(row.title, row.body),
            tuple(sorted(row.audiences or ())),
        )
    return PreviousCrawl(pages, frozenset(foreign))


def for_audiences(previous: PreviousCrawl, audiences: tuple[str, ...]) -> PreviousCrawl:
    """``previous`` without the conditional-GET validators of pages stored for other audiences
    than this run's: a page that has not changed is fetched whole and written again, so a new
    ``--audience`` reaches every page of the site, unchanged ones included."""
    pages = {
        url: page
        if page.audiences == audiences
        else dataclasses.replace(page, validators=Validators(etag=None, last_modified=None))
        for url, page in previous.pages.items()
    }
    return PreviousCrawl(pages, previous.foreign_ids)


def read_previous(
    sites: Iterable[Site], session_factory: Callable[[], AbstractContextManager[Session]]
) -> dict[Site, PreviousCrawl]:
    """Each site's earlier crawl, read from the cards table in one session."""
    with session_factory() as session:
        return {
            site: previous_from_rows(site, cards_with_id_prefix(session, site_prefix(site)))
            for site in sites
        }
