"""Email addresses in signed tokens: the domain of a well-formed address, or nothing.

The admin proxy makes an admin of an allowlisted email domain, so the domain must be the
address's own: ``x@evil.test@example.com`` is not an address at example.com, it is no address.
An address here is the plain form identity providers issue: a dot-atom local part (RFC 5322
``atext`` characters, single dots between them, at most 64), exactly one ``@``, and a host name
of at least two letter-digit-hyphen labels (at most 253 characters), in ASCII. Anything else
(display names, quoted local parts, comments, address literals, spaces, control characters,
non-ASCII) is refused rather than interpreted: none of it is how a verified email is written.
"""

from __future__ import annotations

import re

#: RFC 5322 ``atext``: the characters of a dot-atom local part.
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LOCAL = re.compile(rf"{_ATEXT}(?:\.{_ATEXT})*")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_DOMAIN = re.compile(rf"{_LABEL}(?:\.{_LABEL})+")
MAX_LOCAL_CHARS = 64
MAX_DOMAIN_CHARS = 253


def email_domain(address: str) -> str | None:
    """The domain of ``address`` in lower case, or None when it is not a well-formed address.

    >>> email_domain("Pat.Lee+cw@Example.COM")
    'example.com'
    >>> email_domain("x@evil.test@example.com") is None
    True
    >>> email_domain("Pat <pat@example.com>") is None
    True
    """
    local, at, domain = address.partition("@")
    if not at or len(local) > MAX_LOCAL_CHARS or len(domain) > MAX_DOMAIN_CHARS:
        return None
    if not (_LOCAL.fullmatch(local) and _DOMAIN.fullmatch(domain)):
        return None  # a second "@" is in neither part's alphabet
    return domain.lower()
