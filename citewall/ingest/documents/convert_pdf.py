"""PDF to text with pypdf: the text of each page, the outline's top entries, the title.

pypdf is pure Python (no required dependencies; AES decryption uses the ``cryptography``
package citewall already has). It reads text, not layout: a scanned PDF has no text to give and
is refused as empty, and headings are not marked in a PDF's text, so ``pdf_sections`` splits by
the outline (bookmarks) when there is one, else by pages.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass

from pypdf import PasswordType, PdfReader
from pypdf.generic import Destination

from citewall.errors import IngestError
from citewall.text.cleaning import clean_text

# pypdf logs what it repairs in a damaged file ("EOF marker not found") as warnings; a file it
# cannot read is refused with the reason instead, and one it repaired needs no line of its own.
logging.getLogger("pypdf").setLevel(logging.ERROR)


@dataclass(frozen=True, slots=True)
class PdfText:
    """What a PDF gives: its metadata title, each page's text, and the outline's top-level
    entries as (title, 0-based page index), in outline order."""

    title: str | None
    pages: list[str]
    outline: list[tuple[str, int]]


def _outline(reader: PdfReader) -> list[tuple[str, int]]:
    """Top-level outline entries that point at a page (nested lists are sub-entries)."""
    out: list[tuple[str, int]] = []
    for item in reader.outline:
        if not isinstance(item, Destination):
            continue
        page = reader.get_destination_page_number(item)
        title = " ".join(clean_text(str(item.title or "")).split())
        if page is not None and 0 <= page < len(reader.pages) and title:
            out.append((title, page))
    return out


#: Titles PDF writers fill in when the author gave none: the file name is a better title.
_PLACEHOLDER_TITLES = frozenset({"untitled", "untitled document"})


def _title(reader: PdfReader) -> str | None:
    meta = reader.metadata
    raw = meta.title if meta is not None else None
    title = " ".join(clean_text(str(raw)).split()) if raw else ""
    return title if title and title.lower() not in _PLACEHOLDER_TITLES else None


def read_pdf(data: bytes, path: str) -> PdfText:
    """The text of the PDF in ``data``; ``path`` names it in errors.

    An encrypted PDF that opens with the empty password (restrictions only) is read; one that
    needs a password is refused, and so is any file pypdf cannot parse.
    """
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
            raise IngestError(
                "encrypted PDF that needs a password; ingest an unencrypted copy", path=path
            )
        pages = [clean_text(page.extract_text() or "") for page in reader.pages]
        return PdfText(_title(reader), pages, _outline(reader))
    except IngestError:
        raise
    except Exception as exc:
        # pypdf raises many types on a damaged file (PdfReadError, ValueError, KeyError,
        # struct.error, zlib.error...): any of them means this file cannot be read.
        raise IngestError(f"unreadable PDF ({type(exc).__name__}: {exc})", path=path) from None
