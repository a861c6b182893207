"""Which IP addresses the crawler may connect to.

A sitemap is input from outside: a URL in it (or a redirect, or a DNS answer) could point the
crawler at the internal network, a cloud metadata service or the machine itself. Only global
unicast addresses are allowed, unless ``CITEWALL_CRAWL_ALLOW_PRIVATE=1`` (tests and benchmarks
on a local server); unspecified, multicast and reserved IPv4 addresses are refused either way.
An IPv6 address that carries an IPv4 one (IPv4-mapped, NAT64 ``64:ff9b::/96``, 6to4) is
judged as that IPv4 address, since that is where the packets end up.
"""

from __future__ import annotations

import ipaddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def embedded_ipv4(address: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 address stands for (mapped, NAT64, 6to4), else ``address``.

    >>> str(embedded_ipv4(ipaddress.ip_address("64:ff9b::7f00:1")))
    '127.0.0.1'
    """
    if isinstance(address, ipaddress.IPv4Address):
        return address
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    return address


def address_problem(address: str, *, allow_private: bool) -> str | None:
    """Why the crawler may not connect to ``address``, or None.

    >>> address_problem("93.184.215.14", allow_private=False) is None
    True
    >>> address_problem("169.254.169.254", allow_private=False)
    'link-local address 169.254.169.254'
    >>> address_problem("::ffff:127.0.0.1", allow_private=True) is None
    True
    """
    try:
        ip = embedded_ipv4(ipaddress.ip_address(address.split("%", 1)[0]))
    except ValueError:
        return f"not an IP address: {address!r}"
    if ip.is_unspecified:
        return f"unspecified address {ip}"
    if ip.is_multicast:
        return f"multicast address {ip}"
    if isinstance(ip, ipaddress.IPv4Address) and ip.is_reserved:
        return f"reserved address {ip}"
    if allow_private:
        return None
    if ip.is_loopback:
        return f"loopback address {ip}"
    if ip.is_link_local:
        return f"link-local address {ip}"
    if ip.is_private:
        return f"private address {ip}"
    if not ip.is_global:
        return f"non-public address {ip}"
    return None
