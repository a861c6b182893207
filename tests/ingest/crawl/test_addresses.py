"""The address policy: what the crawler may connect to, with and without
CITEWALL_CRAWL_ALLOW_PRIVATE and CITEWALL_CRAWL_ALLOW_LINK_LOCAL."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from testenv import examples

from citewall.config import load_settings
from citewall.ingest.crawl.addresses import METADATA_ADDRESSES, address_problem
from citewall.ingest.crawl.site import crawl_sites

PRIVATE_V4 = [
    ipaddress.IPv4Network(n)
    for n in ("10.0.0.0/8", "127.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
]
LINK_LOCAL_V4 = ipaddress.IPv4Network("169.254.0.0/16")
LINK_LOCAL_V6 = ipaddress.IPv6Network("fe80::/10")
FORMS = ["plain", "mapped", "nat64", "6to4"]


def problem(address: str, *, private: bool = False, link_local: bool = False) -> str | None:
    found = address_problem(address, allow_private=private, allow_link_local=link_local)
    return None if found is None else found.reason


def spelled(address: ipaddress.IPv4Address, form: str) -> str:
    """``address`` as written plainly, or in an IPv6 address that carries it."""
    return {
        "plain": str(address),
        "mapped": f"::ffff:{address}",
        "nat64": str(ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) + int(address))),
        "6to4": str(ipaddress.IPv6Address((0x2002 << 112) | (int(address) << 80) | 1)),
    }[form]


@st.composite
def in_networks(draw: st.DrawFn, networks: list[ipaddress.IPv4Network]) -> ipaddress.IPv4Address:
    net = draw(st.sampled_from(networks))
    return net[draw(st.integers(0, net.num_addresses - 1))]


@hsettings(max_examples=examples(200))
@given(in_networks(PRIVATE_V4), st.sampled_from(FORMS))
def test_private_and_loopback_refused_in_every_spelling(
    address: ipaddress.IPv4Address, form: str
) -> None:
    """An IPv6 spelling of the same IPv4 address is judged as that address."""
    assert problem(spelled(address, form)) is not None
    assert problem(spelled(address, form), private=True) is None


@hsettings(max_examples=examples(200))
@given(
    in_networks([LINK_LOCAL_V4])
    | st.sampled_from([a for a in METADATA_ADDRESSES if isinstance(a, ipaddress.IPv4Address)]),
    st.sampled_from(FORMS),
    st.booleans(),
)
def test_link_local_and_metadata_v4_need_their_own_setting(
    address: ipaddress.IPv4Address, form: str, private: bool
) -> None:
    """CITEWALL_CRAWL_ALLOW_PRIVATE is for an intranet help center, not the cloud metadata
    service next to it; only CITEWALL_CRAWL_ALLOW_LINK_LOCAL lets the crawler reach those."""
    reason = problem(spelled(address, form), private=private)
    assert reason is not None and str(address) in reason
    assert problem(spelled(address, form), private=private, link_local=True) is None


@hsettings(max_examples=examples(200))
@given(st.integers(0, LINK_LOCAL_V6.num_addresses - 1), st.booleans())
def test_link_local_v6_needs_its_own_setting(offset: int, private: bool) -> None:
    address = str(LINK_LOCAL_V6[offset])
    assert problem(address, private=private) is not None
    assert problem(address, private=private, link_local=True) is None


@hsettings(max_examples=examples(300))
@given(st.ip_addresses(), st.booleans(), st.booleans())
def test_each_setting_only_ever_allows_more(address: object, private: bool, ll: bool) -> None:
    """Nothing refused with both off is allowed unless it is global; the link-local setting
    allows nothing but link-local and metadata addresses."""
    text = str(address)
    strict = problem(text)
    if strict is None:
        assert ipaddress.ip_address(text).is_global
    assert strict is not None or problem(text, private=private, link_local=ll) is None
    without = problem(text, private=private)
    if without is not None and problem(text, private=private, link_local=True) is None:
        assert without.startswith(("link-local address", "cloud metadata address"))


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("169.254.169.254", "link-local address 169.254.169.254"),
        ("169.254.170.2", "link-local address 169.254.170.2"),
        ("fe80::1", "link-local address fe80::1"),
        ("fe80::a9fe:a9fe%eth0", "link-local address fe80::a9fe:a9fe"),
        ("fd00:ec2::254", "cloud metadata address fd00:ec2::254"),
        ("100.100.100.200", "cloud metadata address 100.100.100.200"),
        ("192.0.0.192", "cloud metadata address 192.0.0.192"),
        ("168.63.129.16", "cloud metadata address 168.63.129.16"),
        ("::ffff:100.100.100.200", "cloud metadata address 100.100.100.200"),
    ],
)
def test_metadata_endpoints_by_name(address: str, reason: str) -> None:
    assert problem(address) == problem(address, private=True) == reason
    assert problem(address, private=True, link_local=True) is None


@pytest.mark.parametrize(
    ("address", "allowed_with_private"),
    [
        ("::1", True),
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
    assert problem(address) is not None
    assert (problem(address, private=True) is None) is allowed_with_private
    if not allowed_with_private:
        assert problem(address, private=True, link_local=True) is not None


@pytest.mark.parametrize("address", ["93.184.215.14", "2606:4700:4700::1111", "8.8.8.8"])
def test_public_addresses_allowed(address: str) -> None:
    assert problem(address) is None


def test_the_metadata_service_is_refused_with_private_allowed(tmp_path: Path) -> None:
    """Refused where the connection would open: no packet leaves, and the reason names the
    setting that would allow it."""
    settings = load_settings(data_dir=tmp_path, crawl_allow_private=True, crawl_delay_s=0.0)
    url = "http://169.254.169.254/latest/meta-data/"
    result = crawl_sites([url], settings, license=None, previous={}, progress=False)
    (only,) = result.sites
    assert not only.cards
    assert [(r.url, r.reason) for r in only.refused] == [
        (
            url,
            "robots.txt could not be read (refused address: 169.254.169.254 resolves to a "
            "link-local address 169.254.169.254 (CITEWALL_CRAWL_ALLOW_LINK_LOCAL=1 allows "
            "link-local and cloud metadata addresses)), so nothing is fetched",
        )
    ]
