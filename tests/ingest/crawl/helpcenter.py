"""The small help center the crawl tests read, served by ``citewall_evals.helpsite``.

``/sitemap.xml`` is an index of two sitemaps and of a sitemap index that lists it back (a loop).
The pages cover every case the crawler must handle: three help articles, a duplicate of one
(same canonical, a tracking query), a same-host redirect to a fourth article, a redirect to
another host (``localhost`` is another host than ``127.0.0.1``), a 404, a page robots.txt
disallows, a PDF, an oversize page and a page that hangs.
"""

from __future__ import annotations

from citewall_evals.helpsite import XML, HelpSite, Route, page, sitemap

VOID = (
    "<p>You can void an unused shipping label within 30 days of purchase. Open the Shipments "
    "page, select the label and choose <b>Void label</b>. A voided label cannot be used again, "
    "so print a new one if the parcel still has to go out.</p>"
    "<h2>When the refund arrives</h2><p>The label cost goes back to your account balance once "
    "the carrier confirms the label was never scanned. This usually takes 5 to 15 business "
    "days, depending on the carrier.</p>"
)
REFUNDS = (
    "<p>Refunds for cancelled orders are paid to the original payment method. Card refunds "
    "take 5 to 10 business days to show on the statement; bank transfers can take longer.</p>"
    "<h2>Partial refunds</h2><p>Open the order, choose <b>Refund</b>, enter the amount and a "
    "reason. The customer receives an email with the refunded amount.</p>"
)
REPRINT = (
    "<p>A label can be reprinted for free as long as it has not been scanned by the carrier. "
    "Open the shipment, choose <b>Print label</b> again and pick the printer format (PDF, "
    "4x6 thermal or A4).</p><p>Reprinting does not change the tracking number.</p>"
)
API_KEYS = (
    "<p>API keys are created under Settings, Developers. Give each integration its own key, "
    "so you can revoke one without breaking the others.</p><h2>Rotating a key</h2><p>Create the "
    "new key, deploy it, then revoke the old one. Revoked keys stop working at once.</p>"
)

#: Path of each article that becomes a card, and the words a member's question uses.
ARTICLES = {
    "/guides/void-a-label": ("Void a shipping label", VOID),
    "/guides/refunds": ("Refund an order", REFUNDS),
    "/guides/reprint": ("Reprint a label", REPRINT),
}


def help_center() -> HelpSite:
    """The server, started, with every route in place."""
    site = HelpSite()
    u = site.url
    routes = {
        "/robots.txt": Route(b"User-agent: *\nDisallow: /internal/\n", "text/plain"),
        "/sitemap.xml": Route(
            sitemap(
                [u("/sitemaps/guides.xml"), u("/sitemaps/more.xml"), u("/sitemaps/loop.xml")],
                index=True,
            ),
            XML,
        ),
        "/sitemaps/guides.xml": Route(
            sitemap([u(p) for p in ARTICLES] + [u("/guides/refunds?utm_source=mail")]), XML
        ),
        "/sitemaps/more.xml": Route(
            sitemap(
                [
                    u("/guides/moved"),
                    u("/guides/away"),
                    u("/guides/missing"),
                    u("/internal/notes"),
                    u("/files/manual.pdf"),
                    u("/guides/huge"),
                    u("/guides/slow"),
                    "https://elsewhere.example/page",
                ]
            ),
            XML,
        ),
        "/sitemaps/loop.xml": Route(sitemap([u("/sitemap.xml")], index=True), XML),
        "/guides/moved": Route(location="/guides/api-keys"),
        "/guides/api-keys": Route(page("Manage API keys", API_KEYS)),
        "/guides/away": Route(location=u("/guides/reprint", host="localhost")),
        "/internal/notes": Route(page("Internal notes", "<p>Not for crawlers.</p>")),
        "/files/manual.pdf": Route(b"%PDF-1.7 a manual", "application/pdf"),
        "/guides/huge": Route(page("Huge", "<p>" + "words " * 20_000 + "</p>")),
        "/guides/slow": Route(page("Slow", VOID), delay_s=5.0),
    }
    for path, (title, main) in ARTICLES.items():
        routes[path] = Route(page(title, main, canonical=u(path)))
    routes["/guides/refunds?utm_source=mail"] = Route(
        page("Refund an order", REFUNDS, canonical=u("/guides/refunds"))
    )
    site.routes.update(routes)
    return site
