"""Malformed URLs from the site (a redirect's Location, a sitemap's <loc>) are refusals of one
URL each, with the reason; the crawl goes on and the good pages become cards."""

from __future__ import annotations

from pathlib import Path

from citewall.config import load_settings
from citewall.ingest.crawl.site import crawl_sites
from citewall_evals.helpsite import XML, HelpSite, Route, page, sitemap
from ingest.crawl.helpcenter import REFUNDS, VOID

#: Redirect path -> (its Location, the reason the crawler gives).
BAD_REDIRECTS = {
    "/r/scheme-no-slashes": (
        "http:ok2",
        "redirect Location 'http:ok2' refused: must start with http:// or https://",
    ),
    "/r/backslashes": (
        "http:\\\\169.254.169.254\\",
        "redirect Location 'http:\\\\\\\\169.254.169.254\\\\' refused: contains a backslash",
    ),
    "/r/javascript": (
        "javascript:alert(1)",
        "redirect Location 'javascript:alert(1)' refused: scheme 'javascript' is not http or https",
    ),
    "/r/bad-ipv6": (
        "http://[::1",
        "redirect Location 'http://[::1' refused: cannot be parsed (Invalid IPv6 URL)",
    ),
    "/r/octal-ip": (
        "http://0177.0.0.1/",
        "redirects to http://0177.0.0.1/, unsafe URL: malformed "
        "(Invalid IPv4 address: '0177.0.0.1')",
    ),
    "/r/relative-bad-ip": (
        "//256.1.1.1/x",
        "redirects to http://256.1.1.1/x, unsafe URL: malformed "
        "(Invalid IPv4 address: '256.1.1.1')",
    ),
}
BAD_LOCS = ["http:ok2", "javascript:alert(1)", "http://0177.0.0.1/x", "http://[::1/x"]


def test_malformed_redirects_and_locs_are_refused_one_by_one(tmp_path: Path) -> None:
    with HelpSite() as site:
        site.routes.update(
            {
                "/void": Route(page("Void a shipping label", VOID)),
                "/ok2": Route(page("Refund an order", REFUNDS)),
                "/sitemap.xml": Route(
                    sitemap([site.url("/void"), *[site.url(p) for p in BAD_REDIRECTS], *BAD_LOCS]),
                    XML,
                ),
            }
        )
        for path, (location, _) in BAD_REDIRECTS.items():
            site.routes[path] = Route(location=location, status=302)
        settings = load_settings(data_dir=tmp_path, crawl_allow_private=True, crawl_delay_s=0.0)
        result = crawl_sites(
            [site.url("/sitemap.xml")], settings, license=None, previous={}, progress=False
        )
    (only,) = result.sites
    assert [card.url for card in only.cards] == [site.url("/void")]
    reasons = {r.url: r.reason for r in only.refused}
    for path, (_, reason) in BAD_REDIRECTS.items():
        assert reasons.pop(site.url(path)) == reason
    listed = f"listed in {site.url('/sitemap.xml')}, unsafe URL: "
    assert reasons == {
        "http:ok2": listed + "must start with http:// or https://",
        "javascript:alert(1)": listed + "scheme 'javascript' is not http or https",
        "http://0177.0.0.1/x": (listed + "malformed (Invalid IPv4 address: '0177.0.0.1')"),
        "http://[::1/x": listed + "cannot be parsed (Invalid IPv6 URL)",
    }
    assert only.prune_blocked is None  # the sitemap itself was read to the end
