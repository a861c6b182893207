"""The admin preview: "answer as a member of groups X, Y". It runs the member path (retrieval
filtered by those groups, the same policy, prose only, external sources only) and stores
nothing: no conversation, no retrieval event, no exposure (docs/audiences.md)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from citewall.api.deps import AdminUser, RuntimeDep
from citewall.api.json_body import StrictJsonRoute
from citewall.api.limits import check_message_length
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.schemas import AdminPreviewRequest, AdminPreviewResponse
from citewall.boundary.external import external_sources_only
from citewall.boundary.prose import prose_only
from citewall.chat.turn import preview_answer
from citewall.kb.audiences import Viewer

router = APIRouter(
    prefix="/api/v1/admin",
    tags=["admin"],
    responses=error_responses(*AUTHENTICATED, 400, 403, 413, 502),
    route_class=StrictJsonRoute,
)


@router.post("/preview", response_model=AdminPreviewResponse, summary="Answer as a member")
def preview(body: AdminPreviewRequest, user: AdminUser, runtime: RuntimeDep) -> Any:
    """What a member of ``groups`` would be answered, exactly as they would see it."""
    check_message_length(body.message, runtime.settings.max_message_chars)
    answer = preview_answer(runtime, viewer=Viewer.member(body.groups), question=body.message)
    return AdminPreviewResponse(
        groups=body.groups,
        answer=prose_only(answer.content),
        answer_status=answer.answer_status,
        sources=external_sources_only(answer.sources, hybrid_path=answer.hybrid_path),
        hybrid_path=answer.hybrid_path,
    )
