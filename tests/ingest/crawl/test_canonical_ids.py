"""Canonical URLs, the same-host rule and card ids: exact, stable and namespaced per site."""

from __future__ import annotations

import re

import httpx
from hypothesis import assume, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from testenv import examples

from citewall.ingest.crawl.canonical import Site, canonical_url, off_site, site_of, url_refusal
from citewall.ingest.crawl.ids import page_card_id, site_prefix
from citewall.kb.card import Card
from citewall.kb.urls import url_problem

CARD_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")

labels = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12).filter(
    lambda s: not s.startswith("-") and not s.endswith("-")
)
hosts = st.lists(labels, min_size=1, max_size=4).map(".".join) | st.sampled_from(
    ["127.0.0.1", "localhost", "[::1]", "HELP.Example.COM"]
)
path_chars = st.text("abcXYZ019-._~%/!$&'()*+,;=:@é", max_size=40)


@st.composite
def urls(draw: st.DrawFn, host: st.SearchStrategy[str] = hosts) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "Https"]))
    port = draw(st.sampled_from(["", ":80", ":443", ":8080", ":8123"]))
    path = draw(path_chars)
    query = draw(st.sampled_from(["", "?q=1", "?b=2&a=1", "?"]))
    fragment = draw(st.sampled_from(["", "#top", "#"]))
    url = f"{scheme}://{draw(host)}{port}/{path}{query}{fragment}"
    # What the crawler accepts: a host of digit labels such as 0.0.0.00 is a malformed IPv4
    # address to httpx, refused with a reason (test_every_url_the_crawler_accepts_can_be_sent).
    assume(url_refusal(url) is None)
    return url


@hsettings(max_examples=examples(300))
@given(urls())
def test_canonical_url_is_idempotent_safe_and_keeps_the_site(url: str) -> None:
    canon = canonical_url(url)
    assert canonical_url(canon) == canon
    assert url_problem(canon) is None
    assert site_of(canon) == site_of(url)
    assert "#" not in canon
    assert off_site(canon, site_of(url)) is None


@hsettings(max_examples=examples(300))
@given(urls(), urls())
def test_off_site_exactly_when_the_sites_differ(a: str, b: str) -> None:
    assert (off_site(b, site_of(a)) is None) == (site_of(a) == site_of(b))


numeric_hosts = st.lists(
    st.integers(0, 999).map(str) | st.sampled_from(["0177", "0x7f", "00"]), min_size=1, max_size=5
).map(".".join)


@hsettings(max_examples=examples(300))
@given(urls(numeric_hosts | hosts))
def test_every_url_the_crawler_accepts_can_be_sent(url: str) -> None:
    """What ``site_of`` accepts, httpx can build a request for (else a crawl would crash)."""
    try:
        canon = canonical_url(url)
    except ValueError as exc:
        assert "malformed" in str(exc)
        return
    httpx.URL(url)
    httpx.URL(canon)


def test_site_rules_by_example() -> None:
    site = site_of("https://help.example.com/sitemap.xml")
    assert off_site("http://help.example.com/a", site) is None  # same host, default ports
    assert off_site("https://help.example.com:8443/a", site) is not None
    assert off_site("https://www.help.example.com/a", site) is not None
    assert (
        off_site("https://user:pw@help.example.com/a", site) == "unsafe URL: contains credentials"
    )
    assert off_site("javascript:alert(1)", site) is not None
    assert site_of("http://127.0.0.1:8123/x") != site_of("http://localhost:8123/x")


@hsettings(max_examples=examples(300))
@given(urls())
def test_card_ids_are_valid_stable_and_under_their_sites_prefix(url: str) -> None:
    canon = canonical_url(url)
    site = site_of(canon)
    card_id = page_card_id(site, canon)
    assert CARD_ID.match(card_id) and len(card_id) <= 200
    assert card_id == page_card_id(site, canon)
    assert card_id.startswith(site_prefix(site))
    Card(id=card_id, title="t", body="b", url=canon)  # the card model accepts it


@hsettings(max_examples=examples(300))
@given(urls(), urls())
def test_ids_differ_for_different_urls_and_prefixes_never_cross_sites(a: str, b: str) -> None:
    ca, cb = canonical_url(a), canonical_url(b)
    sa, sb = site_of(ca), site_of(cb)
    if ca != cb:
        assert page_card_id(sa, ca) != page_card_id(sb, cb)
    if sa != sb:
        assert not page_card_id(sb, cb).startswith(site_prefix(sa))
        assert not site_prefix(sb).startswith(site_prefix(sa))


def test_prefix_of_a_host_is_not_the_prefix_of_a_longer_host() -> None:
    """``a.com`` and ``a.com-b`` slug alike at the start; the site hash and the dot keep their
    ids apart."""
    short, longer = Site("a.com"), Site("a.com-b")
    assert not page_card_id(longer, "http://a.com-b/x").startswith(site_prefix(short))
