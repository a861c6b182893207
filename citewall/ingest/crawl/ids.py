"""Card ids of crawled pages: stable per URL, namespaced per site.

``site-<host slug>-<site hash>.<path slug>-<url hash>``, e.g.
``site-help-example-com-00613d60.guides-void-a-label-c45af82c299f``. The slugs keep ids
readable; the hashes make them exact: the url hash tells apart URLs whose slugs are equal,
and the site hash ends the site's prefix with a ``.`` no host slug contains, so one site's
prefix is never the start of another site's ids (``--prune`` relies on it).
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import urlsplit

from citewall.ingest.crawl.canonical import Site

#: Longest slug taken from a host and from a path; ids stay far below the 200-character cap.
HOST_SLUG_CHARS = 50
PATH_SLUG_CHARS = 80

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def _slug(text: str, limit: int) -> str:
    return _NOT_SLUG.sub("-", text.lower())[:limit].strip("-")


def _digest(text: str, chars: int) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:chars]


def site_prefix(site: Site) -> str:
    """The start of every card id of ``site``.

    >>> site_prefix(Site("help.example.com"))
    'site-help-example-com-00613d60.'
    """
    return f"site-{_slug(site.key, HOST_SLUG_CHARS) or 'host'}-{_digest(site.key, 8)}."


def page_card_id(site: Site, url: str) -> str:
    """The card id of the page at canonical ``url`` on ``site``.

    >>> page_card_id(Site("help.example.com"), "https://help.example.com/guides/void-a-label")
    'site-help-example-com-00613d60.guides-void-a-label-c45af82c299f'
    """
    parts = urlsplit(url)
    path = f"{parts.path}?{parts.query}" if parts.query else parts.path
    return f"{site_prefix(site)}{_slug(path, PATH_SLUG_CHARS) or 'index'}-{_digest(url, 12)}"
