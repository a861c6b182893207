"""Example questions for an empty conversation: from settings (``CITEWALL_EXAMPLE_QUESTIONS``),
so an operator chooses them; ``citewall demo`` reads the demo KB's own list. Never derived from
the knowledge base, so no internal card can surface through them."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from citewall.api.deps import CurrentUser, RuntimeDep
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.schemas import ExamplesPublic

router = APIRouter(prefix="/api/v1", tags=["chat"], responses=error_responses(*AUTHENTICATED))


@router.get("/examples", response_model=ExamplesPublic)
def example_questions(user: CurrentUser, runtime: RuntimeDep) -> Any:
    """Questions to suggest on an empty conversation (may be empty)."""
    return ExamplesPublic(questions=list(runtime.settings.example_questions))
