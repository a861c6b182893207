"""One polite GET: robots.txt, the per-host delay, redirects checked hop by hop, a deadline,
a size cap and conditional requests.

Every hop of a redirect chain is checked as the first URL was: safe (``kb.urls``), on the
crawl's site (a redirect to another host is refused), not from https down to http, allowed by
robots.txt; the connection itself is checked by the transport (``transport.py``). A response
is read in chunks and given up as soon as it passes the byte cap or the deadline, so a huge
page or a host that trickles bytes costs at most ``max_bytes`` and ``timeout_s``; the cap
holds for what a compressed body inflates to as well (``decoding.py``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx

from citewall.ingest.crawl.canonical import Site, canonical_url, off_site
from citewall.ingest.crawl.decoding import BodyDecoder, BodyRefused
from citewall.ingest.crawl.pacing import HostPacer
from citewall.ingest.crawl.robots import RobotsRules
from citewall.ingest.crawl.transport import AddressRefused, CrawlClient
from citewall.kb.urls import url_problem

#: Redirects followed before a URL is refused (RFC 9309 and browsers use a handful too).
MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_GONE = frozenset({404, 410})


class FetchRefused(Exception):
    """A URL the crawler did not get, and why. ``gone``: the server says it no longer exists
    (404, 410), or robots.txt now forbids it; the page's card may then be pruned. ``status``:
    the HTTP status that refused it, if one did."""

    def __init__(
        self, url: str, reason: str, *, gone: bool = False, status: int | None = None
    ) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason
        self.gone = gone
        self.status = status


@dataclass(frozen=True, slots=True)
class Validators:
    """What a server said identifies a response's version (for a conditional GET next time)."""

    etag: str | None = None
    last_modified: str | None = None

    def request_headers(self) -> dict[str, str]:
        headers = {}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers


@dataclass(frozen=True, slots=True)
class Fetched:
    """A response the crawler accepted: 200 with its body, or 304 (``not_modified``)."""

    #: The canonical form of the URL that answered, after redirects.
    url: str
    not_modified: bool
    media_type: str
    charset: str | None
    body: bytes
    validators: Validators
    #: Time on the network (waits for the per-host delay excluded).
    seconds: float


@dataclass(frozen=True, slots=True)
class Limits:
    """The caps of one request."""

    max_bytes: int
    timeout_s: float


class Fetcher:
    """GETs URLs of one or more sites politely (module docstring); safe to share by threads."""

    def __init__(self, client: CrawlClient, pacer: HostPacer) -> None:
        self._client = client
        self._pacer = pacer

    def get(
        self,
        url: str,
        site: Site,
        limits: Limits,
        *,
        robots: RobotsRules | None,
        validators: Validators | None = None,
    ) -> Fetched:
        """Fetch ``url`` on ``site``; raise ``FetchRefused`` naming the URL and the reason.

        ``robots=None`` is for robots.txt itself. ``validators`` makes the request conditional:
        a 304 comes back as ``not_modified`` with an empty body.
        """
        network_s = 0.0
        current = url
        for _ in range(MAX_REDIRECTS + 1):
            self._check(url, current, site, robots)
            self._pacer.wait(site.key)
            headers = validators.request_headers() if validators else {}
            t0 = time.perf_counter()
            try:
                location = self._one(url, current, headers, limits, t0 + limits.timeout_s)
            finally:
                network_s += time.perf_counter() - t0
            if isinstance(location, _Body):
                return Fetched(
                    url=canonical_url(current),
                    not_modified=location.status == 304,
                    media_type=location.media_type,
                    charset=location.charset,
                    body=location.body,
                    validators=location.validators,
                    seconds=network_s,
                )
            if problem := _location_problem(location):
                raise FetchRefused(url, f"redirect Location {location!r} refused: {problem}")
            nxt = urljoin(current, location)
            if urlsplit(current).scheme == "https" and urlsplit(nxt).scheme == "http":
                raise FetchRefused(url, f"redirects from https down to http ({nxt})")
            if reason := off_site(nxt, site):
                raise FetchRefused(url, f"redirects to {nxt}, {reason}")
            current = nxt
        raise FetchRefused(url, f"more than {MAX_REDIRECTS} redirects")

    def _check(self, url: str, current: str, site: Site, robots: RobotsRules | None) -> None:
        if reason := off_site(current, site):
            raise FetchRefused(url, reason)
        if robots is not None and (reason := robots.refusal(current)):
            where = "" if current == url else f" (redirected to {current})"
            raise FetchRefused(url, reason + where, gone=robots.unreachable is None)

    def _one(
        self, url: str, current: str, headers: dict[str, str], limits: Limits, deadline: float
    ) -> _Body | str:
        """One request: the body, or the Location to follow."""
        try:
            with self._client.stream(current, headers) as response:
                status = response.status_code
                if status in _REDIRECTS:
                    location = str(response.headers.get("location", ""))
                    if not location:
                        raise FetchRefused(url, f"HTTP {status} without a Location")
                    return location
                if status == 304:
                    if not headers:
                        raise FetchRefused(url, "HTTP 304 to a request that was not conditional")
                    return _Body(304, "", None, b"", _validators(response))
                if status != 200:
                    reason = f"HTTP {status} ({response.reason_phrase})"
                    raise FetchRefused(url, reason, gone=status in _GONE, status=status)
                body = _read_capped(url, response, limits.max_bytes, deadline, limits.timeout_s)
                content_type = response.headers.get("content-type", "")
                media_type = content_type.split(";", 1)[0].strip().lower()
                charset = response.charset_encoding
                return _Body(200, media_type, charset, body, _validators(response))
        except httpx.TimeoutException as exc:
            raise FetchRefused(url, f"timed out after {limits.timeout_s:g} s") from exc
        except AddressRefused as exc:
            fix = f" ({exc.allowed_by})" if exc.allowed_by else ""
            raise FetchRefused(url, f"refused address: {exc}{fix}") from exc
        except httpx.HTTPError as exc:
            raise FetchRefused(url, f"cannot fetch ({type(exc).__name__}: {exc})") from exc


@dataclass(frozen=True, slots=True)
class _Body:
    status: int
    media_type: str
    charset: str | None
    body: bytes
    validators: Validators


def _location_problem(location: str) -> str | None:
    """What is wrong with a Location as written, or None. An absolute one must be a safe URL
    as it stands (``http:ok2`` would resolve against the current URL, but names no host); a
    relative one must parse, and is checked again once resolved."""
    problem = url_problem(location)
    if problem is None:
        return None
    try:
        absolute = bool(urlsplit(location).scheme)
    except ValueError:
        return problem
    return problem if absolute else None


def _validators(response: httpx.Response) -> Validators:
    return Validators(
        etag=response.headers.get("etag"), last_modified=response.headers.get("last-modified")
    )


def _read_capped(
    url: str, response: httpx.Response, max_bytes: int, deadline: float, timeout_s: float
) -> bytes:
    """The decoded body, refused past ``max_bytes`` (raw or decoded) or past ``deadline``."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise FetchRefused(url, f"larger than {max_bytes} bytes (Content-Length {declared})")
    try:
        decoder = BodyDecoder(response.headers.get("content-encoding", ""), max_bytes=max_bytes)
        chunks: list[bytes] = []
        for chunk in response.iter_raw():
            chunks.append(decoder.feed(chunk))
            if time.perf_counter() > deadline:
                raise FetchRefused(url, f"timed out after {timeout_s:g} s")
        decoder.finish()
    except BodyRefused as exc:
        raise FetchRefused(url, str(exc)) from None
    return b"".join(chunks)
