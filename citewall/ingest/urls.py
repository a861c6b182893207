"""URL verification for card metadata: the only URLs citewall ever shows come through here.

A URL is safe when it is http or https, has a non-empty host, carries no credentials, and
contains no whitespace, control characters or backslashes anywhere (browsers "fix" those
in ways that turn a harmless-looking string into another destination).
"""

from __future__ import annotations

import unicodedata
from urllib.parse import urlsplit

MAX_URL_LENGTH = 2048


def url_problem(url: object) -> str | None:
    """Say what is wrong with ``url``, or None if it is safe to show as a link.

    >>> url_problem("https://help.example.com/a") is None
    True
    >>> url_problem("javascript:alert(1)")
    "scheme 'javascript' is not http or https"
    """
    if not isinstance(url, str):
        return "not a string"
    if url == "":
        return "empty"
    if len(url) > MAX_URL_LENGTH:
        return f"longer than {MAX_URL_LENGTH} characters"
    for ch in url:
        if ch.isspace():
            return "contains whitespace"
        if ch == "\\":
            return "contains a backslash"
        if unicodedata.category(ch) in {"Cc", "Cf", "Zl", "Zp", "Zs", "Cs", "Co", "Cn"}:
            return "contains a control or invisible character"
    try:
        parts = urlsplit(url)
        port = parts.port  # raises on a bad port
    except ValueError as exc:
        return f"cannot be parsed ({exc})"
    del port
    scheme = parts.scheme.lower()
    if scheme not in {"http", "https"}:
        return f"scheme {scheme or '(none)'!r} is not http or https"
    if not url.lower().startswith(scheme + "://"):
        return "must start with http:// or https://"
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return "contains credentials"
    if not parts.hostname:
        return "has no host"
    return None
