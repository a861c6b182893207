"""A DOCX's zip package, inflated within limits before python-docx sees it (zip bombs).

A DOCX is a zip archive; its 50 MB on disk can inflate to gigabytes (a ``word/document.xml``
of whitespace packs about 1000:1). The central directory's sizes are checked against
``inflation``'s rule before anything is inflated: the members together at most ``max_bytes``
(``CITEWALL_DOCUMENT_MAX_BYTES``), and no member packed too tightly. Those sizes are the
archive's own claim, so each member is then inflated a chunk at a time and stopped at its
claimed size; ``zipfile`` checks the CRC of what was read. python-docx gets the members so
read, re-packed uncompressed: it never inflates anything itself.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

from citewall.errors import IngestError
from citewall.ingest.documents.inflation import packed_too_tightly

#: Highest inflated:packed ratio of a member above ``inflation.RATIO_FLOOR_BYTES``. Word's
#: XML packs about 5-20:1 and its images (already compressed) about 1:1; 100:1 leaves room for
#: very repetitive tables, while a bomb (hundreds to 1000:1) is refused unread.
DOCX_MAX_RATIO = 100
#: Bytes inflated per read: what one step of a member can cost, whatever its claim.
_CHUNK_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class MemberSize:
    """A zip member's name and its sizes, as the central directory states them."""

    name: str
    inflated: int
    packed: int


def size_problem(members: list[MemberSize], max_bytes: int) -> str | None:
    """Why members of these stated sizes must not be inflated, or None when they may.

    >>> size_problem([MemberSize("word/document.xml", 2_000_000, 10_000)], 50_000_000)[:66]
    'word/document.xml inflates to 2,000,000 bytes, more than 100 times'
    >>> size_problem([MemberSize("word/document.xml", 2_000_000, 40_000)], 50_000_000) is None
    True
    """
    total = 0
    for member in members:
        total += member.inflated
        if total > max_bytes:
            return (
                f"{member.name} inflates to {member.inflated:,} bytes, bringing the archive to "
                f"{total:,}, over the {max_bytes:,} byte limit (CITEWALL_DOCUMENT_MAX_BYTES); "
                "split the document or raise the limit"
            )
        if packed_too_tightly(member.inflated, member.packed, DOCX_MAX_RATIO):
            return (
                f"{member.name} inflates to {member.inflated:,} bytes, more than {DOCX_MAX_RATIO} "
                f"times its packed size ({member.packed:,} bytes): a zip bomb, not a Word file"
            )
    return None


def _inflate(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: str) -> bytes:
    """The member, read a chunk at a time: ``zipfile`` stops at the stated size and raises
    ``BadZipFile`` when the CRC of what it read is wrong (the archive lied about the member)."""
    out = bytearray()
    try:
        with archive.open(info) as member:
            while chunk := member.read(_CHUNK_BYTES):
                out += chunk
    except zipfile.BadZipFile:
        raise IngestError(
            f"unreadable DOCX ({info.filename} does not match the {info.file_size:,} bytes its "
            "zip directory states: a damaged or tampered archive)",
            path=path,
        ) from None
    return bytes(out)


def bounded_docx(data: bytes, path: str, max_bytes: int) -> bytes:
    """The DOCX in ``data`` re-packed uncompressed, once its members passed the limits.

    An IngestError names ``path`` and the reason: a member too big or packed too tightly, or
    an archive that is not a zip or lies about a member's size.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            sizes = [MemberSize(i.filename, i.file_size, i.compress_size) for i in infos]
            if problem := size_problem(sizes, max_bytes):
                raise IngestError(problem, path=path)
            members = [(info.filename, _inflate(archive, info, path)) for info in infos]
    except (zipfile.BadZipFile, NotImplementedError, OSError) as exc:
        # Not a zip, an encrypted member or an unsupported compression method.
        raise IngestError(f"unreadable DOCX ({type(exc).__name__}: {exc})", path=path) from None
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as repacked:
        for name, content in members:
            repacked.writestr(name, content)
    return out.getvalue()
