"""Which files are documents, in which format, and how a Markdown file is told apart.

A Markdown file whose first line is ``---`` is a card with YAML front matter (read by
``citewall.ingest.loaders`` exactly as before); any other Markdown file is a document.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

DocumentFormat = Literal["html", "pdf", "docx", "markdown"]

#: File suffix (lower case) -> document format.
DOCUMENT_FORMATS: dict[str, DocumentFormat] = {
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
    ".md": "markdown",
    ".markdown": "markdown",
}
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})

#: Bytes read to find the first line: front matter opens with a short ``---`` line.
_PEEK_BYTES = 1024


def document_format(path: Path) -> DocumentFormat | None:
    """The format a file's suffix names, or None when it is not a document suffix.

    >>> document_format(Path("Guide.PDF"))
    'pdf'
    """
    return DOCUMENT_FORMATS.get(path.suffix.lower())


def starts_with_front_matter(path: Path) -> bool:
    """Whether a Markdown file opens with a ``---`` line (front matter), reading one line only.

    An unreadable file counts as front matter, so the card loader reports why it cannot be read
    exactly as it did before documents existed.
    """
    try:
        with path.open("rb") as f:
            first = f.readline(_PEEK_BYTES)
    except OSError:
        return True
    return first.decode("utf-8", errors="replace").strip() == "---"


@dataclass(frozen=True, slots=True)
class ConvertedText:
    """A document converted to Markdown, and the title its own metadata gives (if any)."""

    title: str | None
    markdown: str
