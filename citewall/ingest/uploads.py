"""Documents uploaded from the admin pages: the ``uploads`` folder source.

An upload is a document (PDF, DOCX, HTML, Markdown) written into the uploads folder under the
data directory, as ``slug.suffix`` beside a sidecar (``slug.suffix.yaml``) holding its url,
licence and audiences. It is first read from a staging folder through the CLI's own loader
(``loaders.load_cards`` of a folder: the same conversion, sidecar checks, card validation and
refusals as ``citewall ingest FOLDER``), ingested through the one ingest path
(``pipeline.ingest_cards``), and only then moved into the uploads folder, so a refused document
leaves nothing behind. Each upload and each removal is a run of the uploads source
(``ingest_runs``) and, when it changed the KB, a ``cards.change`` audit line naming who.

The folder is a document folder like any other: a sync of the uploads source (``ingest.sync``)
or ``citewall ingest DATA_DIR/uploads`` reads the same files and gives the same card ids.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PureWindowsPath

import yaml

from citewall.config import Settings
from citewall.errors import (
    CitewallError,
    ConflictError,
    IngestError,
    LimitError,
    ServiceUnavailableError,
    UserError,
)
from citewall.ingest.documents.formats import DOCUMENT_FORMATS
from citewall.ingest.documents.ids import slug
from citewall.ingest.documents.sidecar import SIDECAR_SUFFIX
from citewall.ingest.loaders import load_cards
from citewall.ingest.pipeline import IngestReport, ingest_cards
from citewall.ingest.playbooks import KB_WRITES, KBWriter, SessionFactory
from citewall.kb.card import Card
from citewall.storage import cards as card_store
from citewall.storage import kb_sources, uploads
from citewall.storage.audit import Actor
from citewall.storage.kb_sources import Refused, RegisteredSource, SourceState, SyncRun
from citewall.storage.uploads import StoredUpload, UploadedDocument

#: The uploads folder's name under the data directory.
UPLOADS_FOLDER = "uploads"
#: Longest slug of an uploaded file's name (its suffix follows), so every card id stays short.
MAX_NAME_CHARS = 80


@dataclass(frozen=True, slots=True)
class UploadRequest:
    """A document as the form sends it: its file name, bytes and options."""

    filename: str
    data: bytes
    url: str | None = None
    license: str | None = None
    audiences: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class UploadResult:
    """A stored upload and the run that ingested it."""

    upload: StoredUpload
    run: SyncRun


class UploadRefusedError(UserError):
    """The document was refused; ``problems`` name the file, line and field (HTTP 422).
    ``run`` is the failed run recorded for it."""

    def __init__(self, problems: Sequence[IngestError], run: SyncRun) -> None:
        self.problems = tuple(problems)
        self.run = run
        super().__init__("; ".join(str(p) for p in problems) or "the document was refused")


def stored_name(filename: str) -> str:
    """The name an uploaded file is stored under: its name slugged, its suffix kept in lower
    case; ``UserError`` for a suffix that is not a document's.

    >>> stored_name("C:\\\\Users\\\\ana\\\\Refund Playbook (v2).PDF")
    'refund-playbook-v2.pdf'
    >>> stored_name("../../etc/notes.md")
    'notes.md'
    """
    base = PureWindowsPath(filename.replace("/", "\\")).name
    suffix = PureWindowsPath(base).suffix.lower()
    if suffix not in DOCUMENT_FORMATS:
        kinds = ", ".join(sorted(DOCUMENT_FORMATS))
        raise UserError(f"{base[:200]!r} is not a document: upload one of {kinds}")
    stem = slug(base[: -len(suffix)])[:MAX_NAME_CHARS].strip("-") or "document"
    return stem + suffix


def uploads_folder(settings: Settings) -> Path:
    """Where uploaded documents are stored: ``DATA_DIR/uploads``."""
    return (settings.data_dir / UPLOADS_FOLDER).resolve()


def uploads_source(
    session_factory: SessionFactory, settings: Settings, now: datetime
) -> RegisteredSource:
    """The registered source uploads belong to, registered on first use."""
    with session_factory() as session:
        return kb_sources.ensure_source(session, "uploads", str(uploads_folder(settings)), now=now)


def _sidecar_text(request: UploadRequest) -> str | None:
    fields: dict[str, object] = {}
    if request.url is not None:
        fields["url"] = request.url
    if request.license is not None:
        fields["license"] = request.license
    if request.audiences:
        fields["audiences"] = list(request.audiences)
    return yaml.safe_dump(fields, allow_unicode=True, sort_keys=False) if fields else None


def _named(error: IngestError, staging: Path) -> IngestError:
    """``error`` naming the file as the uploads folder has it, not the staging copy."""
    try:
        where = Path(error.path).relative_to(staging).as_posix()
    except ValueError:
        where = error.path
    return IngestError(error.reason, path=where, line=error.line, field=error.field)


def _refusals(errors: Sequence[IngestError]) -> tuple[Refused, ...]:
    return tuple(
        Refused(f"{e.path}:{e.line}" if e.line else e.path or "upload", str(e)) for e in errors
    )


def _ingest(writer: KBWriter, cards: Sequence[Card], previous: frozenset[str]) -> IngestReport:
    """Ingest ``cards`` in place of ``previous`` (an earlier upload of the same name); a dead
    embedder or vector store is a 503, never a 500."""
    try:
        return ingest_cards(
            cards,
            writer.settings,
            embedder=writer.embedder,
            session_factory=writer.session_factory,
            prune=True,
            prune_only=previous,
            progress=False,
        )
    except CitewallError:
        raise
    except Exception as exc:  # the embedder or the vector store failed mid-ingest
        raise ServiceUnavailableError(f"the ingest failed: {type(exc).__name__}: {exc}") from exc


def _applied(
    report: IngestReport, refusals: tuple[Refused, ...], note: str, now: datetime, t0: float
) -> SyncRun:
    return SyncRun(
        status="applied",
        started_at=now,
        duration_s=time.perf_counter() - t0,
        added=report.added,
        updated=report.updated,
        unchanged=report.unchanged,
        removed=report.deleted,
        refusals=refusals,
        note=note,
    )


def _stage(staging: Path, name: str, request: UploadRequest) -> str | None:
    """Write the document (and its sidecar, returned) into ``staging`` as the uploads folder
    will hold them."""
    (staging / name).write_bytes(request.data)
    sidecar = _sidecar_text(request)
    if sidecar is not None:
        (staging / (name + SIDECAR_SUFFIX)).write_text(sidecar, encoding="utf-8")
    return sidecar


def _place(staging: Path, folder: Path, name: str, *, has_sidecar: bool) -> None:
    """Move the staged document (and its sidecar) into the uploads folder, replacing an earlier
    upload of the name; an earlier sidecar the new upload has none of goes."""
    os.replace(staging / name, folder / name)
    side = name + SIDECAR_SUFFIX
    if has_sidecar:
        os.replace(staging / side, folder / side)
    else:
        (folder / side).unlink(missing_ok=True)


def _check_ids(writer: KBWriter, cards: Sequence[Card], own: frozenset[str]) -> None:
    """``ConflictError`` when a card id is another source's (a folder, a playbook)."""
    with writer.session_factory() as session:
        taken = set(card_store.card_hashes(session)) - own
    clash = sorted({c.id for c in cards} & taken)
    if clash:
        raise ConflictError(
            f"card id {clash[0]!r} belongs to a card of another source; rename the file"
        )


def upload_document(
    writer: KBWriter, request: UploadRequest, *, author: Actor, now: datetime
) -> UploadResult:
    """Store, read and ingest one uploaded document, replacing an earlier upload of the same
    name. ``UploadRefusedError`` (a failed run is recorded) when the loader refuses it,
    ``LimitError`` when it is over ``upload_max_bytes``, ``ConflictError`` when its card ids
    are another source's."""
    settings = writer.settings
    name = stored_name(request.filename)
    if len(request.data) > settings.upload_max_bytes:
        raise LimitError(
            f"the document is {len(request.data):,} bytes, over the {settings.upload_max_bytes:,}"
            " byte upload limit (CITEWALL_UPLOAD_MAX_BYTES); split it or raise the limit"
        )
    folder = uploads_folder(settings)
    t0 = time.perf_counter()
    with KB_WRITES:
        source = uploads_source(writer.session_factory, settings, now)
        with writer.session_factory() as session:
            previous = uploads.find_upload(session, name)
        before = frozenset(previous.document.card_ids) if previous else frozenset()
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".upload-", dir=folder.parent) as tmp:
            staging = Path(tmp)
            sidecar = _stage(staging, name, request)
            loaded = load_cards([staging], document_max_bytes=settings.document_max_bytes)
            problems = [_named(e, staging) for e in loaded.errors]
            if problems or not loaded.cards:
                run = SyncRun(
                    status="failed",
                    started_at=now,
                    duration_s=time.perf_counter() - t0,
                    refusals=_refusals(problems),
                    note=f"upload of {name} by {author.name} refused",
                )
                with writer.session_factory() as session:
                    stored = kb_sources.record_sync(session, source.id, run, None)
                raise UploadRefusedError(problems, stored)
            _check_ids(writer, loaded.cards, frozenset(source.card_ids))
            report = _ingest(writer, loaded.cards, before)
            _place(staging, folder, name, has_sidecar=sidecar is not None)
        served = tuple(sorted(c.id for c in loaded.cards))
        run = _applied(report, _refusals(report.errors), f"upload of {name}", now, t0)
        document_row = UploadedDocument(
            name=name,
            filename=request.filename[:255],
            format=DOCUMENT_FORMATS[Path(name).suffix],
            size_bytes=len(request.data),
            url=request.url,
            license=request.license,
            audiences=request.audiences,
            card_ids=served,
        )
        detail = {
            "upload": name,
            "added": report.added,
            "updated": report.updated,
            "deleted": report.deleted,
        }
        others = frozenset(source.card_ids) - before
        with writer.session_factory() as session:
            upload, stored_run = uploads.record_upload(
                session,
                document_row,
                source_id=source.id,
                run=run,
                state=SourceState(sorted(others | set(served))),
                uploaded_by=author.name,
                uploaded_by_user_id=author.user_id,
                now=now,
                audit_event=author.event("cards.change", f"upload:{name}", detail),
            )
    return UploadResult(upload, stored_run)


def remove_document(
    writer: KBWriter, upload_id: int, *, author: Actor, now: datetime
) -> tuple[StoredUpload, SyncRun]:
    """Remove an upload: its cards from every index and the catalogue, then its file; the run
    and the audit line are recorded with the row's removal. ``NotFoundError`` for no such
    upload."""
    settings = writer.settings
    t0 = time.perf_counter()
    with KB_WRITES:
        with writer.session_factory() as session:
            upload = uploads.get_upload(session, upload_id)
        source = uploads_source(writer.session_factory, settings, now)
        ids = frozenset(upload.document.card_ids)
        report = _ingest(writer, [], ids)
        name = upload.document.name
        folder = uploads_folder(settings)
        (folder / name).unlink(missing_ok=True)
        (folder / (name + SIDECAR_SUFFIX)).unlink(missing_ok=True)
        run = _applied(report, (), f"removed upload {name}", now, t0)
        detail = {"removed": name, "deleted": report.deleted}
        with writer.session_factory() as session:
            stored_run = uploads.remove_upload(
                session,
                upload_id,
                source_id=source.id,
                run=run,
                state=SourceState(sorted(frozenset(source.card_ids) - ids)),
                audit_event=author.event("cards.change", f"upload:{name}", detail),
            )
    return upload, stored_run
