"""Documents under one folder -> cards: read (size cap first), convert, split, id, validate.

Each document is all or nothing: any problem (too big, unreadable, encrypted, not UTF-8, no
text, a bad sidecar, a card that does not validate) refuses the whole document with an
``IngestError`` naming the file and the reason, and the other documents still load. Ids are
assigned over every section loaded together (``ids.assign_ids``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from citewall.errors import IngestError
from citewall.ingest.documents.convert_docx import docx_to_markdown
from citewall.ingest.documents.convert_html import html_to_markdown
from citewall.ingest.documents.convert_pdf import read_pdf
from citewall.ingest.documents.formats import ConvertedText, DocumentFormat, document_format
from citewall.ingest.documents.ids import SectionKey, assign_ids
from citewall.ingest.documents.markdown_sections import reply_parts, split_markdown
from citewall.ingest.documents.pdf_sections import pdf_sections
from citewall.ingest.documents.sections import AnchoredSection
from citewall.ingest.documents.sidecar import (
    SIDECAR_FIELDS,
    SIDECAR_SUFFIX,
    Sidecar,
    read_sidecar,
)
from citewall.kb.card import Card
from citewall.text.cleaning import clean_text

#: ``Card.title``'s limit.
MAX_TITLE_CHARS = 500


@dataclass(slots=True)
class DocumentBatch:
    """Cards of the documents that loaded, and one error per refused document or sidecar."""

    cards: list[Card] = field(default_factory=list)
    errors: list[IngestError] = field(default_factory=list)
    #: Refused documents: their card ids are unknown (pruning must not guess them).
    unidentified: int = 0


@dataclass(frozen=True, slots=True)
class Document:
    """A converted document, before ids: where it is, its title, sections and sidecar."""

    relative: str
    format: DocumentFormat
    title: str
    sections: list[AnchoredSection]
    sidecar: Sidecar | None


def read_capped(path: Path, max_bytes: int) -> bytes:
    """The file's bytes, refused before reading when larger than ``max_bytes``."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise IngestError(
                f"file is {size:,} bytes, over the {max_bytes:,} byte limit "
                "(CITEWALL_DOCUMENT_MAX_BYTES); split it or raise the limit",
                path=str(path),
            )
        with path.open("rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise IngestError(f"cannot read file: {exc.strerror or exc}", path=str(path)) from None
    if len(data) > max_bytes:  # it grew since stat
        raise IngestError(f"file is over the {max_bytes:,} byte limit", path=str(path))
    return data


def decode_utf8(data: bytes, path: str) -> str:
    """Text of a UTF-8 file (a byte order mark is dropped); other encodings are refused."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestError(
            f"not valid UTF-8 (byte {exc.start}: {data[exc.start : exc.start + 1]!r}); "
            "save the file as UTF-8",
            path=path,
        ) from None


def _markdown_sections(converted: ConvertedText) -> tuple[str | None, list[AnchoredSection]]:
    split = split_markdown(converted.markdown, title=converted.title)
    return split.title, split.sections


def convert(
    path: Path, fmt: DocumentFormat, max_bytes: int
) -> tuple[str | None, list[AnchoredSection]]:
    """The document's own title (None when it states none) and its sections."""
    data = read_capped(path, max_bytes)
    name = str(path)
    if fmt == "pdf":
        pdf = read_pdf(data, name, max_bytes)
        return pdf.title, pdf_sections(pdf.pages, pdf.outline)
    if fmt == "docx":
        return _markdown_sections(docx_to_markdown(data, name, max_bytes))
    text = decode_utf8(data, name)
    if fmt == "html":
        return _markdown_sections(html_to_markdown(text))
    return _markdown_sections(ConvertedText(None, clean_text(text)))


def _file_title(relative: str) -> str:
    """A title from the file name: ``refund_playbook-v2.pdf`` -> ``refund playbook v2``."""
    stem = Path(relative).stem
    return " ".join(stem.replace("_", " ").replace("-", " ").split()) or Path(relative).name


def load_document(path: Path, root: Path, max_bytes: int) -> Document:
    """One document under ``root``, converted and split; an IngestError refuses it."""
    fmt = document_format(path)
    if fmt is None:
        raise IngestError("not a document format (html, htm, pdf, docx, md)", path=str(path))
    sidecar = read_sidecar(path)
    title, sections = convert(path, fmt, max_bytes)
    if not sections:
        raise IngestError(
            "no text to ingest (empty, or only headings; a scanned PDF needs OCR first)",
            path=str(path),
        )
    relative = path.relative_to(root).as_posix()
    chosen = (sidecar.title if sidecar else None) or title or _file_title(relative)
    return Document(relative, fmt, chosen, sections, sidecar)


def card_title(document_title: str, label: str | None) -> str:
    """A card's title: the document's, plus the section's name when it has one.

    >>> card_title("Refund playbook", "Duplicate charges")
    'Refund playbook: Duplicate charges'
    """
    title = document_title if label in {None, document_title} else f"{document_title}: {label}"
    return title[:MAX_TITLE_CHARS]


def _card(document: Document, part: AnchoredSection, card_id: str) -> Card:
    side = document.sidecar
    section = part.section
    label = section.label if part.anchor is not None else None
    derived: dict[str, str] = {"path": document.relative, "format": document.format}
    if label is not None:
        derived["section"] = label
    if section.pages is not None:
        first, last = section.pages
        derived["pages"] = str(first) if first == last else f"{first}-{last}"
    return Card(
        id=card_id,
        title=card_title(document.title, label),
        body=section.body,
        url=side.url if side else None,
        license=side.license if side else None,
        reply=section.reply,
        audiences=side.audiences if side else (),
        metadata={**(side.metadata if side else {}), **derived},
    )


def _reply_line(file: Path, reply: str | None) -> int | None:
    """The 1-based line of the ``Tell the member`` heading whose text is in ``reply``, for a
    Markdown document (the lines of a converted HTML or DOCX file name nothing a person sees)."""
    try:
        text = file.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    parts = reply_parts(clean_text(text))
    found = [p for p in parts if reply and p.text and p.text in reply] or parts
    return found[0].start + 1 if found else None


def _cards(document: Document, ids: dict[SectionKey, str], file: Path) -> list[Card]:
    """Every card of ``document``, or an IngestError naming where the bad value came from."""
    cards: list[Card] = []
    for part in document.sections:
        try:
            cards.append(_card(document, part, ids[SectionKey(document.relative, part.anchor)]))
        except ValidationError as exc:
            raise _card_error(exc, document, part, file) from None
    return cards


def _card_error(
    exc: ValidationError, document: Document, part: AnchoredSection, file: Path
) -> IngestError:
    err = exc.errors()[0]
    name = ".".join(str(p) for p in err.get("loc", ())) or "card"
    top = name.split(".", 1)[0]
    side = document.sidecar
    if top == "reply" and side is not None and "url" in side.lines:
        # The sidecar's url makes the document external: name the line that does.
        return IngestError(
            f"a 'Tell the member' section: {err['msg']}",
            path=side.path,
            line=side.lines["url"],
            field=name,
        )
    if side is not None and top in SIDECAR_FIELDS and top in side.lines:
        return IngestError(err["msg"], path=side.path, line=side.lines[top], field=name)
    line = None
    if top == "reply" and document.format == "markdown":
        line = _reply_line(file, part.section.reply)
    return IngestError(err["msg"], path=str(file), line=line, field=name)


def _stray_sidecar(side: Path, documents: set[Path]) -> IngestError | None:
    document = side.with_name(side.name.removesuffix(SIDECAR_SUFFIX))
    if document in documents:
        return None
    if document.is_file():
        return IngestError(
            f"{document.name} has YAML front matter, so it is a card: put url and license in "
            "its front matter; this sidecar is not read",
            path=str(side),
        )
    return IngestError(f"sidecar of a document that is not here ({document.name})", path=str(side))


def load_documents(
    root: Path, files: Sequence[Path], *, max_bytes: int, sidecars: Sequence[Path] = ()
) -> DocumentBatch:
    """Cards of the documents ``files`` under ``root`` (ids from paths relative to it).

    ``sidecars`` are the ``*.<document suffix>.yaml`` files found beside them: one whose
    document is not among ``files`` is reported, so a misnamed sidecar does not go unnoticed.
    """
    batch = DocumentBatch()
    loaded: list[tuple[Path, Document]] = []
    for path in files:
        try:
            loaded.append((path, load_document(path, root, max_bytes)))
        except IngestError as exc:
            batch.errors.append(exc)
            batch.unidentified += 1
    ids = assign_ids(
        SectionKey(doc.relative, part.anchor) for _, doc in loaded for part in doc.sections
    )
    for path, doc in loaded:
        try:
            batch.cards += _cards(doc, ids, path)
        except IngestError as exc:
            batch.errors.append(exc)
            batch.unidentified += 1
    known = set(files)
    batch.errors += [err for side in sidecars if (err := _stray_sidecar(side, known))]
    return batch
