"""Ask questions as a member on ``POST /api/v1/chat`` and keep what the member received.

The ``answer`` of the reply is the member's prose: the serve boundary has already removed the
``[n]`` markers and made link syntax plain text (``boundary.prose.prose_only``), so anything
left in it that points at a source is there for the member to read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from citewall_evals.questions import Asked


@dataclass(frozen=True, slots=True)
class MemberAnswer:
    """One member turn as served: the prose and the ids to read the stored turn back."""

    generator: str
    question_id: str
    question: str
    answer: str
    status: int
    conversation_id: str = ""
    message_id: str = ""
    external_sources: int = 0
    answer_status: str = ""

    @property
    def ok(self) -> bool:
        return self.status == 200


def ask_as_member(
    client: Any,
    questions: Sequence[Asked],
    token: str,
    generator: str,
    asked: list[str] | None = None,
) -> list[MemberAnswer]:
    """Each question in a new conversation, as the member ``token``.

    ``asked`` collects the member's own words (history echoes them; see ``leaks``).
    """
    headers = {"Authorization": f"Bearer {token}"}
    out: list[MemberAnswer] = []
    for q in questions:
        text = q.question
        if asked is not None:
            asked.append(text)
        resp = client.post("/api/v1/chat", json={"message": text}, headers=headers)
        body = resp.json() if resp.status_code == 200 else {}
        out.append(
            MemberAnswer(
                generator=generator,
                question_id=q.id,
                question=text,
                answer=str(body.get("answer", "")),
                status=resp.status_code,
                conversation_id=str(body.get("conversation_id", "")),
                message_id=str(body.get("message_id", "")),
                external_sources=len(body.get("sources") or []),
                answer_status=str(body.get("answer_status", "")),
            )
        )
    return out
