"""Documents uploaded from the admin pages (``uploads``), each recorded with its ingest run.

An upload's row, the run that ingested it, the uploads source's new card list and the audit
line are written in one transaction (``record_upload``); so are a removal's (``remove_upload``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from citewall.errors import NotFoundError
from citewall.storage import kb_sources
from citewall.storage.audit import AuditEvent
from citewall.storage.failures import storage_errors
from citewall.storage.kb_sources import SourceState, SyncRun
from citewall.storage.models import Upload


@dataclass(frozen=True, slots=True)
class UploadedDocument:
    """What an upload stored: the document's name in the uploads folder and its options."""

    name: str
    filename: str
    format: str
    size_bytes: int
    url: str | None
    license: str | None
    audiences: tuple[str, ...]
    card_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StoredUpload:
    """An upload as stored, with who uploaded it, when, and the run that ingested it."""

    id: int
    document: UploadedDocument
    run_id: int | None
    uploaded_by: str
    uploaded_at: datetime


def _stored(row: Upload) -> StoredUpload:
    return StoredUpload(
        id=row.id,
        document=UploadedDocument(
            name=row.name,
            filename=row.filename,
            format=row.format,
            size_bytes=row.size_bytes,
            url=row.url,
            license=row.license,
            audiences=tuple(row.audiences or ()),
            card_ids=tuple(row.card_ids or ()),
        ),
        run_id=row.run_id,
        uploaded_by=row.uploaded_by,
        uploaded_at=row.uploaded_at,
    )


def list_uploads(session: Session) -> list[StoredUpload]:
    """Every upload, newest first."""
    query = select(Upload).order_by(Upload.uploaded_at.desc(), Upload.id.desc())
    with storage_errors(session, "reading the uploads"):
        return [_stored(row) for row in session.scalars(query)]


def find_upload(session: Session, name: str) -> StoredUpload | None:
    """The upload stored as ``name``, if any."""
    with storage_errors(session, "reading the upload"):
        row = session.scalar(select(Upload).where(Upload.name == name))
    return _stored(row) if row is not None else None


def get_upload(session: Session, upload_id: int) -> StoredUpload:
    """The upload ``upload_id``; ``NotFoundError`` when there is none."""
    with storage_errors(session, "reading the upload"):
        row = session.get(Upload, upload_id)
    if row is None:
        raise NotFoundError(f"no upload {upload_id}: GET /api/v1/admin/uploads lists them")
    return _stored(row)


def record_upload(
    session: Session,
    document: UploadedDocument,
    *,
    source_id: int,
    run: SyncRun,
    state: SourceState,
    uploaded_by: str,
    uploaded_by_user_id: int | None,
    now: datetime,
    audit_event: AuditEvent,
) -> tuple[StoredUpload, SyncRun]:
    """Store (or replace, by name) an applied upload with its run, the uploads source's new
    cards and the audit line, in one transaction."""
    with storage_errors(session, "recording the upload"):
        row = session.scalar(select(Upload).where(Upload.name == document.name))
        if row is None:
            row = Upload(name=document.name)
            session.add(row)
        row.filename = document.filename
        row.format = document.format
        row.size_bytes = document.size_bytes
        row.url = document.url
        row.license = document.license
        row.audiences = list(document.audiences)
        row.card_ids = list(document.card_ids)
        row.uploaded_by = uploaded_by
        row.uploaded_by_user_id = uploaded_by_user_id
        row.uploaded_at = now
        stored_run = kb_sources.record_sync(
            session, source_id, run, state, audit_event, commit=False
        )
        row.run_id = stored_run.id
        session.commit()
        return _stored(row), stored_run


def remove_upload(
    session: Session,
    upload_id: int,
    *,
    source_id: int,
    run: SyncRun,
    state: SourceState,
    audit_event: AuditEvent,
) -> SyncRun:
    """Delete the upload's row with the run that removed its cards, the uploads source's new
    cards and the audit line, in one transaction."""
    with storage_errors(session, "removing the upload"):
        row = session.get(Upload, upload_id)
        if row is None:
            raise NotFoundError(f"no upload {upload_id}: it was removed meanwhile")
        stored_run = kb_sources.record_sync(
            session, source_id, run, state, audit_event, commit=False
        )
        session.delete(row)
        session.commit()
        return stored_run


def runs_of(session: Session, uploads: Sequence[StoredUpload]) -> dict[int, SyncRun]:
    """The run that ingested each of ``uploads``, by run id."""
    return kb_sources.runs_by_id(session, [u.run_id for u in uploads if u.run_id is not None])
