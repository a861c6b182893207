"""Wire schemas of the documents uploaded from the admin pages.

The document travels as base64 in a JSON body (the server reads no multipart forms). Its
contents, url, licence and audiences are checked by the ingest's own loader
(``ingest.uploads``), so a refused document gets the reasons ``citewall ingest`` gives: a 422
whose ``detail`` lists ``{"loc": ["body", field], "msg", "type": "document"}`` problems, ``msg``
naming the file, line and field.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citewall.api.source_schemas import SyncRunPublic, sync_run_public
from citewall.storage.kb_sources import SyncRun
from citewall.storage.uploads import StoredUpload

_STRICT = ConfigDict(extra="forbid")

#: Internal: its cards are woven into answers, never shown as a source. External: cited with
#: its url.
Visibility = Literal["internal", "external"]


class UploadCreate(BaseModel):
    """A document from the form."""

    model_config = _STRICT

    #: The file's name; its suffix says the format (.pdf, .docx, .html, .htm, .md, .markdown).
    filename: str = Field(min_length=1, max_length=255)
    #: The file's bytes, base64 (standard alphabet, padded).
    content_base64: str
    visibility: Visibility
    #: The public page an external document is cited with (required when external, else none).
    url: str | None = Field(default=None, max_length=2000)
    license: str | None = Field(default=None, max_length=500)
    audiences: list[str] = Field(default_factory=list, max_length=20)


class UploadPublic(BaseModel):
    """An uploaded document, its cards and the run that ingested it."""

    model_config = _STRICT

    id: int
    #: Its name in the uploads folder (uploading this name again replaces it).
    name: str
    filename: str
    format: str
    size_bytes: int
    visibility: Visibility
    url: str | None
    license: str | None
    audiences: list[str]
    card_ids: list[str]
    uploaded_by: str
    uploaded_at: datetime
    run: SyncRunPublic | None


class UploadRemoved(BaseModel):
    """A removed upload and the run that removed its cards."""

    model_config = _STRICT

    id: int
    name: str
    run: SyncRunPublic


def upload_public(upload: StoredUpload, run: SyncRun | None) -> UploadPublic:
    doc = upload.document
    return UploadPublic(
        id=upload.id,
        name=doc.name,
        filename=doc.filename,
        format=doc.format,
        size_bytes=doc.size_bytes,
        visibility="external" if doc.url else "internal",
        url=doc.url,
        license=doc.license,
        audiences=list(doc.audiences),
        card_ids=list(doc.card_ids),
        uploaded_by=upload.uploaded_by,
        uploaded_at=upload.uploaded_at,
        run=sync_run_public(run) if run is not None else None,
    )
