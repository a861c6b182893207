"""Real document files made for the tests: PDFs (reportlab; encrypted ones with pypdf), DOCX
(python-docx, with heading styles and a core title), HTML and Markdown.

``words(topic, n)`` makes ``n`` distinct-looking words about a topic, so a test can size a
section past the split threshold and still find its text in a card.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Sequence
from pathlib import Path

import docx
from pypdf import PdfReader, PdfWriter
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

#: Points between lines of PDF text, and characters per line.
_LEADING, _LINE_CHARS = 13, 95


def words(topic: str, n: int) -> str:
    """``n`` words: ``topic`` and numbered filler, e.g. ``refunds w1 w2 ... refunds w5``."""
    return " ".join(topic if i % 5 == 0 else f"{topic[:3]}{i}" for i in range(n))


def pdf_bytes(
    pages: Sequence[str], *, title: str | None = None, outline: Sequence[tuple[str, int]] = ()
) -> bytes:
    """A PDF with one page per text, a metadata title and top-level bookmarks (title, page)."""
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, pagesize=A4)
    if title:
        pdf.setTitle(title)
    marks = dict((page, name) for name, page in outline)
    for i, text in enumerate(pages):
        if i in marks:
            pdf.bookmarkPage(f"p{i}")
            pdf.addOutlineEntry(marks[i], f"p{i}", level=0)
        y = A4[1] - 60
        for line in textwrap.wrap(text, _LINE_CHARS):
            pdf.drawString(50, y, line)
            y -= _LEADING
        pdf.showPage()
    pdf.save()
    return buf.getvalue()


def encrypted(pdf: bytes, user_password: str) -> bytes:
    """``pdf`` encrypted with AES-256 (an empty user password opens it without asking)."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_bytes(blocks: Sequence[tuple[int, str]], *, title: str = "") -> bytes:
    """A DOCX of (level, text) blocks: level 0 a paragraph, 1-3 a heading; a core title."""
    document = docx.Document()
    document.core_properties.title = title
    for level, text in blocks:
        if level:
            document.add_heading(text, level)
        else:
            document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path
