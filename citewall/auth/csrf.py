"""The CSRF rule: the admin proxy's assertion is the only ambient credential (the proxy derives
it from its cookie), so a request it authenticates with an unsafe method must prove it was
sent by citewall's own pages.

Such a request carries ``X-Citewall-CSRF: 1`` (a custom header: another site's page cannot
send it without a CORS preflight, and CORS never allows it) and, when it has an ``Origin``, that
origin's host is the request's own ``Host``. Bearer-token requests need none of this: a
browser never attaches a bearer token by itself.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from citewall.errors import PermissionDeniedError

CSRF_HEADER = "X-Citewall-CSRF"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
REFUSAL = "cross-site request refused"


def same_site_request(method: str, csrf: str | None, origin: str | None, host: str | None) -> bool:
    """Whether a proxy-authenticated request passes the rule.

    The origin is compared by host and port only: the server may sit behind a TLS-terminating
    proxy and not know its own scheme.

    >>> same_site_request("GET", None, "https://evil.test", "admin.example.com")
    True
    >>> same_site_request("POST", "1", "https://admin.example.com", "admin.example.com")
    True
    >>> same_site_request("POST", "1", "https://evil.test", "admin.example.com")
    False
    >>> same_site_request("POST", None, None, "admin.example.com")
    False
    """
    if method.upper() not in UNSAFE_METHODS:
        return True
    if csrf != "1":
        return False
    if origin is None:
        return True
    return host is not None and urlsplit(origin).netloc.lower() == host.strip().lower()


def check_same_site(method: str, csrf: str | None, origin: str | None, host: str | None) -> None:
    """``PermissionDeniedError`` ("cross-site request refused") unless ``same_site_request``."""
    if not same_site_request(method, csrf, origin, host):
        raise PermissionDeniedError(REFUSAL)
