"""Replay the labelled questions through the API and score the stored answers' citations.

Each question is asked on ``POST /api/v1/chat`` as a member (``member_answers``); the stored
turn is then read as an admin (``GET /api/v1/admin/conversations/{id}``: content with markers,
every source) and scored with ALCE citation recall and precision (``citation_quality``). The
member's answers are kept for the dangling-reference check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from citewall_evals.member_answers import MemberAnswer, ask_as_member
from citewall_evals.quality.citations import CitationCounts, score_answer
from citewall_evals.quality.support import SupportJudge
from citewall_evals.questions import Asked


@dataclass(slots=True)
class ReplayResult:
    answers: list[MemberAnswer] = field(default_factory=list)
    citations: list[CitationCounts] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    #: Question id -> the stored assistant message (content with markers, full sources).
    stored: dict[str, dict[str, Any]] = field(default_factory=dict)

    def citation_totals(self) -> CitationCounts:
        total = CitationCounts()
        for counts in self.citations:
            total.add(counts)
        return total


def replay_questions(
    client: Any,
    questions: Sequence[Asked],
    judge: SupportJudge,
    tokens: Any,
    generator: str,
    asked: list[str] | None = None,
) -> ReplayResult:
    """Ask each question as a member, read the stored turn as an admin, score its citations."""
    admin = {"Authorization": f"Bearer {tokens.admin}"}
    result = ReplayResult()
    result.answers = ask_as_member(client, questions, tokens.member, generator, asked)
    for served in result.answers:
        if not served.ok:
            result.failures.append(f"{served.question_id}: chat HTTP {served.status}")
            continue
        stored_resp = client.get(
            f"/api/v1/admin/conversations/{served.conversation_id}", headers=admin
        )
        if stored_resp.status_code != 200:
            result.failures.append(
                f"{served.question_id}: admin view HTTP {stored_resp.status_code}"
            )
            continue
        message = next(
            (m for m in stored_resp.json()["messages"] if str(m["id"]) == str(served.message_id)),
            None,
        )
        if message is None:
            result.failures.append(
                f"{served.question_id}: stored message {served.message_id} missing"
            )
            continue
        result.stored[served.question_id] = message
        result.citations.append(
            score_answer(message["content"], message.get("sources") or [], judge)
        )
    return result
