"""PDF to text with pypdf: the text of each page, the outline's top entries, the title.

pypdf is pure Python (no required dependencies; AES decryption uses the ``cryptography``
package citewall already has). It reads text, not layout: a scanned PDF has no text to give and
is refused as empty, and headings are not marked in a PDF's text, so ``pdf_sections`` splits by
the outline (bookmarks) when there is one, else by pages.

A PDF is read within ``pdf_limits.PDF_LIMITS`` (what one stream may inflate to and hold), and
its pages' decoded content may total ``max_bytes`` and no more than ``inflation``'s ratio
allows for the file's size: a decompression bomb is refused, not read.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass

from pypdf import PageObject, PasswordType, PdfReader, apply_configuration
from pypdf.errors import LimitReachedError
from pypdf.generic import ArrayObject, Destination, StreamObject

from citewall.errors import IngestError
from citewall.ingest.documents.inflation import packed_too_tightly
from citewall.ingest.documents.pdf_limits import PDF_LIMITS, PDF_MAX_RATIO
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


def _content_bytes(page: PageObject) -> int:
    """The decoded size of a page's content streams (pypdf keeps them decoded for the text)."""
    contents = page.get("/Contents")
    resolved = contents.get_object() if contents is not None else None
    streams = resolved if isinstance(resolved, ArrayObject) else [resolved]
    return sum(
        len(stream.get_data())
        for item in streams
        if item is not None and isinstance(stream := item.get_object(), StreamObject)
    )


def _pages_text(reader: PdfReader, file_bytes: int, path: str, max_bytes: int) -> list[str]:
    """Each page's text, refused once the pages' decoded content passes ``max_bytes`` or
    inflates past the ratio rule for a file of ``file_bytes``."""
    pages: list[str] = []
    total = 0
    for number, page in enumerate(reader.pages, start=1):
        total += _content_bytes(page)
        if packed_too_tightly(total, file_bytes, PDF_MAX_RATIO):
            raise IngestError(
                f"page {number}'s content brings the pages to {total:,} bytes decoded, more "
                f"than {PDF_MAX_RATIO} times the file's {file_bytes:,} bytes: a decompression bomb",
                path=path,
            )
        if total > max_bytes:
            raise IngestError(
                f"page {number}'s content brings the pages to {total:,} bytes decoded, over "
                f"the {max_bytes:,} byte limit (CITEWALL_DOCUMENT_MAX_BYTES); split the "
                "document or raise the limit",
                path=path,
            )
        pages.append(clean_text(page.extract_text() or ""))
    return pages


def read_pdf(data: bytes, path: str, max_bytes: int) -> PdfText:
    """The text of the PDF in ``data``; ``path`` names it in errors.

    An encrypted PDF that opens with the empty password (restrictions only) is read; one that
    needs a password is refused, and so is any file pypdf cannot parse, one with a stream past
    ``PDF_LIMITS``, and one whose pages decode to more than ``max_bytes`` of content.
    """
    try:
        with apply_configuration(PDF_LIMITS):
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
                raise IngestError(
                    "encrypted PDF that needs a password; ingest an unencrypted copy", path=path
                )
            pages = _pages_text(reader, len(data), path, max_bytes)
            return PdfText(_title(reader), pages, _outline(reader))
    except IngestError:
        raise
    except LimitReachedError as exc:
        raise IngestError(
            f"a PDF stream inflates or parses past ingest's per-stream limits (pypdf: {exc}); "
            "a decompression bomb, or a page far denser than text: export the text as a new "
            "PDF or DOCX",
            path=path,
        ) from None
    except Exception as exc:
        # pypdf raises many types on a damaged file (PdfReadError, ValueError, KeyError,
        # struct.error, zlib.error...): any of them means this file cannot be read.
        raise IngestError(f"unreadable PDF ({type(exc).__name__}: {exc})", path=path) from None
