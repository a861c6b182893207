"""A page's main content, title and declared canonical URL, by trafilatura.

trafilatura finds the main content of a page (navigation, headers, footers and boilerplate
left out) and writes it as Markdown, headings and lists kept, which is what a card's body is
(docs/decisions.md says why trafilatura). The text is cleaned like any untrusted text
(``text.cleaning.clean_text``: no control or invisible characters).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import trafilatura

from citewall.text.cleaning import clean_text

#: A card's title is at most 500 characters (``kb.card.Card``).
MAX_TITLE_CHARS = 500


class NotExtractable(ValueError):
    """A page with no title or no main content to make a card from."""


@dataclass(frozen=True, slots=True)
class ExtractedPage:
    """What a card is made of: the page's title, its main content as Markdown, and the
    canonical URL the page declares (absolute, unchecked; None when it declares none)."""

    title: str
    body: str
    canonical: str | None

    @property
    def digest(self) -> str:
        """Identifies the content: pages with equal digests are duplicates."""
        return content_digest(self.title, self.body)


def content_digest(title: str, body: str) -> str:
    """sha256 of a card's title and body (what makes two pages the same page)."""
    return hashlib.sha256(f"{title}\n\n{body}".encode()).hexdigest()


def without_title_heading(body: str, title: str) -> str:
    """``body`` without a first heading that only repeats ``title`` (the card has its title;
    a cited excerpt should start with the page's words, not "# Title").

    >>> without_title_heading("# Returns\\n\\nTo send a parcel back...", "Returns")
    'To send a parcel back...'
    >>> without_title_heading("## Fees\\n\\nNone.", "Returns")
    '## Fees\\n\\nNone.'
    """
    first, _, rest = body.partition("\n")
    if first.startswith("#") and " ".join(first.lstrip("#").split()).casefold() == title.casefold():
        return rest.strip()
    return body


def extract_page(html: bytes, url: str, charset: str | None = None) -> ExtractedPage:
    """The main content of the HTML page fetched from ``url``; raises ``NotExtractable``.

    ``charset`` is the one the server declared; without it trafilatura detects the encoding.
    """
    markup: bytes | str = html
    if charset:
        try:
            markup = html.decode(charset, errors="replace")
        except LookupError:  # an encoding name Python does not know: let trafilatura guess
            markup = html
    document = trafilatura.bare_extraction(
        markup,
        url=url,
        with_metadata=True,
        include_formatting=True,
        include_tables=True,
        include_comments=False,
        include_links=False,
        include_images=False,
    )
    if document is None or isinstance(document, dict):
        raise NotExtractable("no main content found in the page")
    title = " ".join(clean_text(document.title or "").split())[:MAX_TITLE_CHARS].strip()
    if not title:
        raise NotExtractable("the page has no title (<title>, og:title or a heading)")
    body = without_title_heading(clean_text(document.text or "").strip(), title)
    if not body:
        raise NotExtractable("no main content found in the page")
    canonical = document.url if isinstance(document.url, str) and document.url else None
    return ExtractedPage(title=title, body=body, canonical=canonical)
