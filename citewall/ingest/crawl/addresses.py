"""Which IP addresses the crawler may connect to.

A sitemap is input from outside: a URL in it (or a redirect, or a DNS answer) could point the
crawler at the internal network, a cloud metadata service or the machine itself. Only global
unicast addresses are allowed, unless ``CITEWALL_CRAWL_ALLOW_PRIVATE=1`` (an intranet site,
tests and benchmarks on a local server). Link-local addresses and the cloud metadata endpoints
(``METADATA_ADDRESSES``) stay refused with it: they hold a machine's credentials, not a help
center, and only ``CITEWALL_CRAWL_ALLOW_LINK_LOCAL=1`` allows them. Unspecified, multicast and
reserved IPv4 addresses are refused whatever the settings. An IPv6 address that carries an
IPv4 one (IPv4-mapped, NAT64 ``64:ff9b::/96``, 6to4) is judged as that IPv4 address, since
that is where the packets end up.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")

#: Cloud metadata and host-agent endpoints outside 169.254.0.0/16 and fe80::/10 (which hold
#: AWS, GCP, Azure and OpenStack's 169.254.169.254, and ECS's 169.254.170.2).
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    {
        ipaddress.IPv6Address("fd00:ec2::254"),  # AWS instance metadata over IPv6
        ipaddress.IPv4Address("100.100.100.200"),  # Alibaba Cloud
        ipaddress.IPv4Address("192.0.0.192"),  # Oracle Cloud (legacy)
        ipaddress.IPv4Address("168.63.129.16"),  # Azure WireServer (a public address)
    }
)

_ALLOW_PRIVATE = "CITEWALL_CRAWL_ALLOW_PRIVATE=1 allows a private site"
_ALLOW_LINK_LOCAL = (
    "CITEWALL_CRAWL_ALLOW_LINK_LOCAL=1 allows link-local and cloud metadata addresses"
)


@dataclass(frozen=True, slots=True)
class AddressProblem:
    """Why an address is refused, and the setting that would allow it (None: no setting)."""

    reason: str
    allowed_by: str | None = None


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


def address_problem(
    address: str, *, allow_private: bool, allow_link_local: bool
) -> AddressProblem | None:
    """Why the crawler may not connect to ``address``, or None.

    >>> address_problem("93.184.215.14", allow_private=False, allow_link_local=False) is None
    True
    >>> address_problem("169.254.169.254", allow_private=True, allow_link_local=False).reason
    'link-local address 169.254.169.254'
    >>> address_problem("::ffff:127.0.0.1", allow_private=True, allow_link_local=False) is None
    True
    """
    try:
        ip = embedded_ipv4(ipaddress.ip_address(address.split("%", 1)[0]))
    except ValueError:
        return AddressProblem(f"not an IP address: {address!r}")
    if ip.is_unspecified:
        return AddressProblem(f"unspecified address {ip}")
    if ip.is_multicast:
        return AddressProblem(f"multicast address {ip}")
    if isinstance(ip, ipaddress.IPv4Address) and ip.is_reserved:
        return AddressProblem(f"reserved address {ip}")
    if ip.is_link_local or ip in METADATA_ADDRESSES:
        if allow_link_local:
            return None
        kind = "link-local" if ip.is_link_local else "cloud metadata"
        return AddressProblem(f"{kind} address {ip}", _ALLOW_LINK_LOCAL)
    if allow_private:
        return None
    if ip.is_loopback:
        return AddressProblem(f"loopback address {ip}", _ALLOW_PRIVATE)
    if ip.is_private:
        return AddressProblem(f"private address {ip}", _ALLOW_PRIVATE)
    if not ip.is_global:
        return AddressProblem(f"non-public address {ip}", _ALLOW_PRIVATE)
    return None
