"""Real document files made for the tests: PDFs (reportlab; encrypted ones with pypdf), DOCX
(python-docx, with heading styles and a core title), HTML and Markdown, and decompression bombs
of both (a DOCX whose ``word/document.xml`` inflates to hundreds of MB, one whose central
directory lies about its sizes, a PDF of FlateDecode content streams built by hand).

``words(topic, n)`` makes ``n`` distinct-looking words about a topic, so a test can size a
section past the split threshold and still find its text in a card.
"""

from __future__ import annotations

import io
import itertools
import struct
import textwrap
import zipfile
import zlib
from collections.abc import Iterator, Sequence
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


#: The DOCX part that holds the text.
DOCUMENT_XML = "word/document.xml"
_MIB = 1024 * 1024


def _repeated(unit: bytes, total: int) -> Iterator[bytes]:
    """``unit`` repeated to ``total`` bytes (rounded down to whole units), a MiB at a time."""
    count = total // len(unit)
    per_chunk = max(1, _MIB // len(unit))
    for start in range(0, count, per_chunk):
        yield unit * min(per_chunk, count - start)


def _docx_with_body(good: bytes, body: Iterator[bytes]) -> bytes:
    """``good`` (a DOCX) with its document.xml body replaced by the chunks of ``body``."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(good)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename != DOCUMENT_XML:
                dst.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
                continue
            head, _, rest = data.partition(b"<w:body>")
            _, _, tail = rest.partition(b"</w:body>")
            target = zipfile.ZipInfo(DOCUMENT_XML, date_time=info.date_time)
            target.compress_type = zipfile.ZIP_DEFLATED
            with dst.open(target, "w", force_zip64=True) as member:
                member.write(head + b"<w:body>")
                for chunk in body:
                    member.write(chunk)
                member.write(b"</w:body>" + tail)
    return out.getvalue()


def docx_bomb(inflated_bytes: int) -> bytes:
    """A valid DOCX whose document.xml inflates to about ``inflated_bytes``: a paragraph, then
    whitespace between elements (legal XML, and what deflate packs best, about 1000:1)."""
    good = docx_bytes([(0, "Carriers refund a voided label.")])
    paragraph = b"<w:p><w:r><w:t>Carriers refund a voided label.</w:t></w:r></w:p>"
    return _docx_with_body(good, itertools.chain([paragraph], _repeated(b" ", inflated_bytes)))


def lying_docx_bomb(bomb: bytes, claimed_bytes: int = 2000) -> bytes:
    """``bomb`` with document.xml's uncompressed size in the central directory (what
    ``zipfile`` believes) rewritten to ``claimed_bytes``: only inflating it shows its size."""
    data = bytearray(bomb)
    name = DOCUMENT_XML.encode()
    entry = data.find(b"PK\x01\x02")
    while data[entry + 46 : entry + 46 + len(name)] != name:
        entry = data.find(b"PK\x01\x02", entry + 4)
    struct.pack_into("<I", data, entry + 24, claimed_bytes)  # uncompressed size
    return bytes(data)


def pdf_with_contents(streams: Sequence[bytes]) -> bytes:
    """A PDF of one page per deflated content stream (FlateDecode), with Helvetica as F1."""
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(streams)))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(streams)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, stream in enumerate(streams):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode()
        )
        objects.append(
            f"<< /Length {len(stream)} /Filter /FlateDecode >>\nstream\n".encode()
            + stream
            + b"\nendstream"
        )
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return bytes(out)


def text_ops(text: str) -> bytes:
    """Content stream operators showing ``text`` in F1."""
    return f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET\n".encode()


def flate_bomb(unit: bytes, inflated_bytes: int) -> bytes:
    """``unit`` repeated to ``inflated_bytes``, deflated: a content stream that is small on disk."""
    deflate = zlib.compressobj(9)
    parts = [deflate.compress(chunk) for chunk in _repeated(unit, inflated_bytes)]
    return b"".join(parts) + deflate.flush()
