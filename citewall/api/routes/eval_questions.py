"""Admin routes for test questions saved from production ("Save as test question") and their
export as the questions file of ``citewall eval kb`` (docs/evaluation.md)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Response

from citewall.api.audit import AuditTrail
from citewall.api.deps import AdminUser, SessionDep
from citewall.api.eval_question_schemas import EvalQuestionAdmin, EvalQuestionCreate
from citewall.api.json_body import StrictJsonRoute
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.chat.turn import history_turns
from citewall.storage import eval_questions
from citewall.storage.models import EvalQuestion

router = APIRouter(
    prefix="/api/v1/admin",
    tags=["admin"],
    responses=error_responses(*AUTHENTICATED, 403, 404),
    route_class=StrictJsonRoute,
)

#: The questions file's media type: JSON Lines.
JSONL = "application/jsonl"


def admin_eval_question(row: EvalQuestion) -> EvalQuestionAdmin:
    return EvalQuestionAdmin.model_validate(row, from_attributes=True)


@router.post(
    "/eval-questions",
    response_model=EvalQuestionAdmin,
    status_code=201,
    responses=error_responses(
        400, described={422: "An unknown card, or neither or both of expected and unanswerable."}
    ),
)
def save_eval_question(
    body: EvalQuestionCreate, session: SessionDep, admin: AdminUser, trail: AuditTrail
) -> Any:
    """Save the question a stored answer answered (from a conversation, a knowledge gap or a
    rated answer) as a test question, with the card(s) that should have answered it or
    ``unanswerable``. Saving the same answer again replaces its test question. 404 for an
    unknown answer; 422 for an unknown card, or neither or both of expected and unanswerable."""
    turn = eval_questions.answered_turn(session, body.message_id)
    conversation = [{"role": t.role, "content": t.content} for t in history_turns(turn.earlier)]
    saved = eval_questions.SavedAnswer(
        source=body.source,
        expected=tuple(body.expected),
        unanswerable=body.unanswerable,
        facts=tuple(body.facts),
    )
    event = trail.event(
        "test_questions.change",
        f"conversation:{turn.answer.conversation_id}",
        {"saved": turn.answer.id, "source": body.source},
    )
    row = eval_questions.save_eval_question(
        session, turn, conversation, saved, admin_id=admin.id, audit_event=event
    )
    return admin_eval_question(row)


@router.get("/eval-questions", response_model=list[EvalQuestionAdmin])
def list_eval_questions(session: SessionDep, admin: AdminUser) -> Any:
    """Every saved test question, oldest first."""
    return [admin_eval_question(r) for r in eval_questions.list_eval_questions(session)]


@router.get(
    "/eval-questions.jsonl",
    response_class=Response,
    responses={200: {"content": {JSONL: {}}, "description": "One question a line"}},
)
def export_eval_questions(session: SessionDep, admin: AdminUser, trail: AuditTrail) -> Response:
    """The saved test questions as a questions file for ``citewall eval kb QUESTIONS.jsonl``:
    one JSON object a line (``id``, ``question``, ``expected`` or ``unanswerable``, ``facts``,
    ``conversation``)."""
    rows = eval_questions.list_eval_questions(session)
    # The file holds members' questions: an export, recorded before it is sent.
    trail.record(session, "export", "test_questions", {"questions": len(rows)})
    lines = [json.dumps(eval_questions.question_line(r), ensure_ascii=False) + "\n" for r in rows]
    return Response(
        "".join(lines),
        media_type=JSONL,
        headers={"Content-Disposition": 'attachment; filename="eval-questions.jsonl"'},
    )


@router.delete("/eval-questions/{question_id}", status_code=204, response_class=Response)
def delete_eval_question(
    question_id: int, session: SessionDep, admin: AdminUser, trail: AuditTrail
) -> Response:
    """Remove a saved test question (404 when there is none)."""
    event = trail.event("test_questions.change", f"test_question:{question_id}", {"deleted": True})
    eval_questions.delete_eval_question(session, question_id, event)
    return Response(status_code=204)
