"""Admin routes that upload documents into the KB and remove them (``ingest.uploads``): each
is read by the CLI's loader, ingested by the CLI's ingest path, recorded as a run of the
uploads source and, when it changed the KB, a ``cards.change`` line of the audit log."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from fastapi import APIRouter, status

from citewall.api.audit import AuditTrail
from citewall.api.deps import AdminUser, RuntimeDep, SessionDep
from citewall.api.json_body import StrictJsonRoute
from citewall.api.responses import AUTHENTICATED, EncodableJSONResponse, error_responses
from citewall.api.source_schemas import sync_run_public
from citewall.api.upload_schemas import (
    UploadCreate,
    UploadPublic,
    UploadRemoved,
    upload_public,
)
from citewall.errors import UserError
from citewall.ingest.playbooks import KBWriter
from citewall.ingest.uploads import (
    UploadRefusedError,
    UploadRequest,
    remove_document,
    stored_name,
    upload_document,
)
from citewall.runtime import Runtime
from citewall.storage import uploads

_DESCRIBED = {
    409: "A card id of the document belongs to another source's card.",
    413: "The document is over CITEWALL_UPLOAD_MAX_BYTES.",
    422: "The document was refused (not a document type, not base64, a bad url, or the "
    "loader's refusal naming the file, line and field).",
}
router = APIRouter(
    prefix="/api/v1/admin",
    tags=["admin"],
    responses=error_responses(*AUTHENTICATED, 403, described=_DESCRIBED),
    route_class=StrictJsonRoute,
)
#: Sidecar fields a problem may name: shown beside that field of the form.
_FORM_FIELDS = frozenset({"url", "license", "audiences"})


def _problem(field: str, msg: str) -> dict[str, Any]:
    return {"loc": ["body", field], "msg": msg, "type": "document"}


def _refused(problems: list[dict[str, Any]]) -> EncodableJSONResponse:
    return EncodableJSONResponse({"detail": problems}, status_code=422)


def _request(body: UploadCreate) -> UploadRequest | EncodableJSONResponse:
    """The upload the body describes, or the 422 naming the field that is wrong."""
    try:
        stored_name(body.filename)
    except UserError as exc:
        return _refused([_problem("filename", str(exc))])
    try:
        data = base64.b64decode(body.content_base64, validate=True)
    except (binascii.Error, ValueError):
        return _refused([_problem("content_base64", "not valid base64 (standard alphabet)")])
    url = body.url.strip() if body.url and body.url.strip() else None
    if body.visibility == "external" and url is None:
        return _refused([_problem("url", "an external document needs the url it is cited with")])
    if body.visibility == "internal" and url is not None:
        return _refused([_problem("url", "an internal document has no url; make it external")])
    license = body.license.strip() if body.license and body.license.strip() else None
    return UploadRequest(
        filename=body.filename,
        data=data,
        url=url,
        license=license,
        audiences=tuple(body.audiences),
    )


def _writer(runtime: Runtime) -> KBWriter:
    return KBWriter(runtime.settings, runtime.session_factory, runtime.embedder.model)


@router.post("/uploads", response_model=UploadPublic, status_code=status.HTTP_201_CREATED)
def create_upload(
    body: UploadCreate, runtime: RuntimeDep, trail: AuditTrail, admin: AdminUser
) -> Any:
    """Upload a document (PDF, DOCX, HTML, Markdown) into the uploads source: read and ingested
    as ``citewall ingest`` reads a folder, served at once; the same name again replaces it."""
    request = _request(body)
    if isinstance(request, EncodableJSONResponse):
        return request
    try:
        result = upload_document(_writer(runtime), request, author=trail, now=runtime.clock())
    except UploadRefusedError as exc:
        return _refused(
            [
                _problem(p.field if p.field in _FORM_FIELDS else "content_base64", str(p))
                for p in exc.problems
            ]
            or [_problem("content_base64", str(exc))]
        )
    return upload_public(result.upload, result.run)


@router.get("/uploads", response_model=list[UploadPublic])
def list_uploads(session: SessionDep, admin: AdminUser) -> Any:
    """Every uploaded document, newest first, with its cards and the run that ingested it."""
    found = uploads.list_uploads(session)
    runs = uploads.runs_of(session, found)
    return [upload_public(u, runs.get(u.run_id) if u.run_id else None) for u in found]


@router.delete("/uploads/{upload_id}", response_model=UploadRemoved, responses=error_responses(404))
def delete_upload(upload_id: int, runtime: RuntimeDep, trail: AuditTrail, admin: AdminUser) -> Any:
    """Remove an uploaded document: its cards leave every index and the catalogue, its file the
    uploads folder."""
    removed, run = remove_document(_writer(runtime), upload_id, author=trail, now=runtime.clock())
    return UploadRemoved(id=removed.id, name=removed.document.name, run=sync_run_public(run))
