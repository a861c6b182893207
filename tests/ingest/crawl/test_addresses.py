"""The private-address policy: what the crawler may connect to, with and without
CITEWALL_CRAWL_ALLOW_PRIVATE."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from testenv import examples

from citewall.ingest.crawl.addresses import address_problem

PRIVATE_V4 = [
    ipaddress.IPv4Network(n)
    for n in ("10.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16")
]


@st.composite
def private_v4(draw: st.DrawFn) -> ipaddress.IPv4Address:
    net = draw(st.sampled_from(PRIVATE_V4))
    return net[draw(st.integers(0, net.num_addresses - 1))]


@hsettings(max_examples=examples(200))
@given(private_v4(), st.sampled_from(["plain", "mapped", "nat64", "6to4"]))
def test_private_loopback_link_local_refused_in_every_spelling(
    address: ipaddress.IPv4Address, form: str
) -> None:
    """An IPv6 spelling of the same IPv4 address is judged as that address."""
    spelled = {
        "plain": str(address),
        "mapped": f"::ffff:{address}",
        "nat64": str(ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) + int(address))),
        "6to4": str(ipaddress.IPv6Address((0x2002 << 112) | (int(address) << 80) | 1)),
    }[form]
    assert address_problem(spelled, allow_private=False) is not None
    assert address_problem(spelled, allow_private=True) is None


@hsettings(max_examples=examples(200))
@given(st.ip_addresses())
def test_allowing_private_only_ever_allows_more(address: object) -> None:
    strict = address_problem(str(address), allow_private=False)
    loose = address_problem(str(address), allow_private=True)
    assert strict is not None or loose is None
    if strict is None:
        assert ipaddress.ip_address(str(address)).is_global


@pytest.mark.parametrize(
    ("address", "allowed_with_private"),
    [
        ("::1", True),
        ("fe80::1", True),
        ("fc00::1", True),
        ("100.64.0.1", True),
        ("0.0.0.0", False),
        ("::", False),
        ("224.0.0.1", False),
        ("255.255.255.255", False),
        ("not-an-ip", False),
    ],
)
def test_named_addresses(address: str, allowed_with_private: bool) -> None:
    assert address_problem(address, allow_private=False) is not None
    assert (address_problem(address, allow_private=True) is None) is allowed_with_private


@pytest.mark.parametrize("address", ["93.184.215.14", "2606:4700:4700::1111", "8.8.8.8"])
def test_public_addresses_allowed(address: str) -> None:
    assert address_problem(address, allow_private=False) is None
