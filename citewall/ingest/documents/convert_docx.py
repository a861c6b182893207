"""DOCX to Markdown with python-docx: paragraphs and tables in document order, headings kept.

Word marks headings with paragraph styles: ``Title`` and ``Heading 1``..``Heading 9`` (names
python-docx reports in English whatever the user interface language), or a custom style based
on one of them. Those become ``#`` lines so ``markdown_sections`` can split at them; list styles
become ``-`` items, table rows ``a | b`` lines. The title is the core property ``title``.
The package is inflated within limits first (``docx_package.bounded_docx``: zip bombs).
"""

from __future__ import annotations

import io
import re

import docx
from docx.styles.style import CharacterStyle
from docx.table import Table
from docx.text.paragraph import Paragraph

from citewall.errors import IngestError
from citewall.ingest.documents.docx_package import bounded_docx
from citewall.ingest.documents.formats import ConvertedText
from citewall.text.cleaning import clean_text

_HEADING_STYLE = re.compile(r"^heading ([1-9])$", re.IGNORECASE)
#: How far up a style's ``based on`` chain a heading style is looked for.
_STYLE_DEPTH = 5


def _heading_level(style: CharacterStyle | None) -> int | None:
    """1-6 for a title or heading style (or one based on it), else None."""
    for _ in range(_STYLE_DEPTH):
        if style is None:
            return None
        name = style.name or ""
        if name.lower() == "title":
            return 1
        if match := _HEADING_STYLE.match(name):
            return min(int(match.group(1)), 6)
        style = style.base_style
    return None


def _paragraph(paragraph: Paragraph) -> str:
    text = " ".join(paragraph.text.split())
    if not text:
        return ""
    style = paragraph.style
    level = _heading_level(style)
    if level is not None:
        return f"{'#' * level} {text}"
    if style is not None and (style.name or "").lower().startswith("list"):
        return f"- {text}"
    return text


def _table(table: Table) -> str:
    rows = [" | ".join(" ".join(cell.text.split()) for cell in row.cells) for row in table.rows]
    return "\n".join(row for row in rows if row.strip(" |"))


def docx_to_markdown(data: bytes, path: str, max_bytes: int) -> ConvertedText:
    """The DOCX in ``data`` as Markdown, with its core title; ``path`` names it in errors.

    Its members may inflate to ``max_bytes`` in all (``docx_package`` has the limits).
    """
    package = bounded_docx(data, path, max_bytes)
    try:
        document = docx.Document(io.BytesIO(package))
        blocks = [
            _paragraph(item) if isinstance(item, Paragraph) else _table(item)
            for item in document.iter_inner_content()
        ]
        title = " ".join(clean_text(document.core_properties.title or "").split())
    except Exception as exc:
        # A damaged DOCX fails in zipfile, lxml or python-docx with many exception types:
        # any of them means this file cannot be read.
        raise IngestError(f"unreadable DOCX ({type(exc).__name__}: {exc})", path=path) from None
    markdown = "\n\n".join(block for block in blocks if block)
    return ConvertedText(title or None, clean_text(markdown))
