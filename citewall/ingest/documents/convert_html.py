"""HTML to Markdown with markdownify (on BeautifulSoup), keeping headings, lists and tables.

Internal HTML exports (wikis, help-desk tools) are whole pages the team wrote, so the whole
body is kept (not a "main content" guess). Scripts, styles and navigation are dropped; links and
images become their text, so no internal address is copied into a card.
"""

from __future__ import annotations

import re

from bs4 import BeautifulSoup
from markdownify import MarkdownConverter

from citewall.ingest.documents.formats import ConvertedText
from citewall.text.cleaning import clean_text

#: Elements whose content is never document text.
_DROPPED = ("script", "style", "noscript", "template", "nav", "head", "title", "svg", "iframe")

_CONVERTER = MarkdownConverter(
    heading_style="ATX",
    bullets="-",
    strip=["a", "img"],
    # Document text, not Markdown to be escaped: ``snake_case`` stays as written.
    escape_asterisks=False,
    escape_underscores=False,
    escape_misc=False,
)
_BLANK_RUNS = re.compile(r"\n{3,}")


def html_to_markdown(html: str) -> ConvertedText:
    """The page's ``<title>`` and its body as Markdown.

    >>> doc = html_to_markdown("<title>Refunds</title><h2>Steps</h2><p>Void it <b>first</b>.</p>")
    >>> doc.title, doc.markdown
    ('Refunds', '## Steps\\n\\nVoid it **first**.')
    """
    soup = BeautifulSoup(html, "html.parser")
    title_tag = soup.find("title")
    title = " ".join(clean_text(title_tag.get_text(" ")).split()) if title_tag else ""
    for tag in soup.find_all(_DROPPED):
        tag.decompose()
    body = soup.find("body") or soup
    markdown = _CONVERTER.convert_soup(body)
    return ConvertedText(title or None, _BLANK_RUNS.sub("\n\n", clean_text(markdown)).strip())
