"""A crawl's site, and the canonical form of the URLs on it.

A site is a host name and, when it is not the scheme's default, a port: ``http://`` and
``https://`` on the default ports are one site (a help center that redirects to https stays
itself), ``help.example.com`` and ``www.help.example.com`` are two. Every URL the crawler
reads, follows or stores is on the site it was given, and passes ``kb.urls.url_problem``.

The canonical form is what a card's ``url`` holds and what its id is derived from: scheme and
host in lower case, no default port, no fragment, ``/`` for an empty path; the path and the
query are kept as written (servers may tell them apart). A URL the crawler reads must also be
one httpx can send (``url_refusal``): ``http://0177.0.0.1/`` passes ``url_problem`` but is no
address httpx will connect to.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import httpx

from citewall.kb.urls import url_problem

_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True, order=True)
class Site:
    """A host the crawler may read: its ASCII host name and its port when not a default one."""

    host: str
    port: int | None = None

    @property
    def key(self) -> str:
        """``help.example.com`` or ``127.0.0.1:8123``: the site's name in cards and reports."""
        return self.host if self.port is None else f"{self.host}:{self.port}"


def _ascii_host(hostname: str) -> str:
    host = hostname.lower().rstrip(".")
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise ValueError(f"host {hostname!r} is not a valid international name") from exc


def _port(scheme: str, port: int | None) -> int | None:
    return None if port is None or port == _DEFAULT_PORTS.get(scheme) else port


def url_refusal(url: str) -> str | None:
    """Why the crawler cannot read ``url`` (``url_problem``, or malformed for httpx), or None.

    >>> url_refusal("http://0177.0.0.1/")
    "malformed (Invalid IPv4 address: '0177.0.0.1')"
    """
    if problem := url_problem(url):
        return problem
    try:
        httpx.URL(url)
    except httpx.InvalidURL as exc:
        return f"malformed ({exc})"
    return None


def site_of(url: str) -> Site:
    """The site ``url`` belongs to. Raises ValueError for a URL ``url_refusal`` refuses.

    >>> site_of("https://Help.Example.com:443/a").key
    'help.example.com'
    >>> site_of("http://127.0.0.1:8123/sitemap.xml").key
    '127.0.0.1:8123'
    """
    if problem := url_refusal(url):
        raise ValueError(f"{url}: {problem}")
    parts = urlsplit(url)
    assert parts.hostname  # url_problem refuses a URL without a host
    return Site(_ascii_host(parts.hostname), _port(parts.scheme.lower(), parts.port))


def canonical_url(url: str) -> str:
    """``url`` in canonical form (module docstring). Raises ValueError for an unsafe URL.

    >>> canonical_url("HTTPS://Help.Example.com:443?q=1#top")
    'https://help.example.com/?q=1'
    """
    site = site_of(url)
    parts = urlsplit(url)
    host = f"[{site.host}]" if ":" in site.host else site.host
    netloc = host if site.port is None else f"{host}:{site.port}"
    return urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", parts.query, ""))


def off_site(url: str, site: Site) -> str | None:
    """Why the crawler may not read ``url`` for ``site`` (unsafe, or another host), or None.

    >>> off_site("https://help.example.com/a", Site("help.example.com")) is None
    True
    >>> off_site("https://evil.example.net/a", Site("help.example.com"))
    'on another host (evil.example.net, not help.example.com)'
    """
    if problem := url_refusal(url):
        return f"unsafe URL: {problem}"
    try:
        other = site_of(url)
    except ValueError as exc:
        return f"unsafe URL: {exc}"
    if other != site:
        return f"on another host ({other.key}, not {site.key})"
    return None
