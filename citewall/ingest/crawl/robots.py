"""robots.txt, read with Protego, and what it means for a crawl (RFC 9309).

A robots.txt that answers 2xx is obeyed (its ``Crawl-delay`` or ``Request-rate`` raises the
per-host delay); one that does not exist (any 4xx) allows everything; one that cannot be read
(5xx, a timeout, a refused address) disallows everything, as RFC 9309 asks: the crawler cannot
know what the site forbids.
"""

from __future__ import annotations

from dataclasses import dataclass

from protego import Protego

#: RFC 9309 asks crawlers to read at least 500 KiB of a robots.txt; the rest is ignored.
ROBOTS_MAX_BYTES = 512 * 1024


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """A site's robots.txt as the crawler obeys it."""

    parser: Protego | None
    user_agent: str
    #: Why the whole site is off limits (robots.txt unreachable), or None.
    unreachable: str | None = None

    def refusal(self, url: str) -> str | None:
        """Why robots.txt forbids fetching ``url``, or None."""
        if self.unreachable is not None:
            return f"robots.txt could not be read ({self.unreachable}), so nothing is fetched"
        if self.parser is not None and not self.parser.can_fetch(url, self.user_agent):
            return "disallowed by robots.txt"
        return None

    def delay_s(self) -> float | None:
        """The delay robots.txt asks for between requests, if any."""
        if self.parser is None:
            return None
        delays = []
        if (crawl_delay := self.parser.crawl_delay(self.user_agent)) is not None:
            delays.append(float(crawl_delay))
        if (rate := self.parser.request_rate(self.user_agent)) is not None and rate.requests:
            delays.append(rate.seconds / rate.requests)
        return max(delays) if delays else None


def allow_all(user_agent: str) -> RobotsRules:
    """No robots.txt (4xx): everything may be fetched."""
    return RobotsRules(None, user_agent)


def parse_robots(body: bytes, user_agent: str) -> RobotsRules:
    """A robots.txt body (first ``ROBOTS_MAX_BYTES``) as rules for ``user_agent``."""
    text = body[:ROBOTS_MAX_BYTES].decode("utf-8", errors="replace")
    return RobotsRules(Protego.parse(text), user_agent)


def unreachable(user_agent: str, reason: str) -> RobotsRules:
    """robots.txt could not be read: nothing on the site is fetched."""
    return RobotsRules(None, user_agent, unreachable=reason)
