"""Ingest a public help center by crawling it: sitemaps in, external cards out.

One file per concept: ``addresses`` (which IP addresses may be connected to), ``transport``
(an httpx client that checks the address it actually connects to), ``canonical`` (a site and
the canonical form of its URLs), ``ids`` (card ids per site), ``robots`` (robots.txt),
``pacing`` (the per-host delay), ``decoding`` (a compressed body, inflated no further than
the cap), ``fetcher`` (one polite GET with its redirects and caps),
``sitemap`` (sitemaps and sitemap indexes), ``extract`` (a page's main content), ``previous``
(what an earlier crawl stored), ``site`` (the crawl itself) and ``run`` (crawl, then ingest).
"""
