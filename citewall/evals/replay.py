"""Replay the labelled questions through the API and score answers two ways.

Each question is asked on ``POST /api/v1/chat`` as a member; the stored turn is then read as an
admin (``GET /api/v1/admin/conversations/{id}``: content with markers, every source, the
retrieval events). From that one turn the harness measures:

- **citation quality** (ALCE recall/precision) of the stored answer, markers and all;
- **answer quality with citations hidden**: the *same scorer* applied to the full stored answer
  (markers stripped) and to what the member received (prose-only, external sources only):
  ``support`` = share of the answer's claims supported by the turn's retrieved cards, and
  ``coverage`` = share of the question's gold cards that support at least one claim. Hiding
  citations must not change either (the member's prose is the stored prose): the deltas must
  stay within ``HIDDEN_TOLERANCE``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from citewall.citations.markers import strip_markers
from citewall.citations.sentences import split_sentences
from citewall.evals.citation_quality import CitationCounts, score_answer
from citewall.evals.support import SupportJudge, judgeable

#: Largest acceptable drop of support or coverage when citations are hidden.
HIDDEN_TOLERANCE = 0.02


@dataclass(slots=True)
class ViewScores:
    support: float
    coverage: float


@dataclass(slots=True)
class ReplayRow:
    question_id: str
    kind: str
    full: ViewScores
    member: ViewScores
    prose_identical: bool
    stored_sources: int
    member_sources: int
    internal_cited: int
    citations: CitationCounts
    hybrid_path: str | None


@dataclass(slots=True)
class ReplayResult:
    rows: list[ReplayRow] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def citation_totals(self) -> CitationCounts:
        total = CitationCounts()
        for row in self.rows:
            total.add(row.citations)
        return total

    def summary(self) -> dict[str, Any]:
        rows = self.rows

        def mean(values: Sequence[float]) -> float:
            return fmean(values) if values else 0.0

        full_support = mean([r.full.support for r in rows])
        member_support = mean([r.member.support for r in rows])
        full_cov = mean([r.full.coverage for r in rows])
        member_cov = mean([r.member.coverage for r in rows])
        by_kind: dict[str, dict[str, float]] = {}
        for kind in sorted({r.kind for r in rows}):
            sub = [r for r in rows if r.kind == kind]
            by_kind[kind] = {
                "questions": len(sub),
                "member_support": mean([r.member.support for r in sub]),
                "member_coverage": mean([r.member.coverage for r in sub]),
                "full_coverage": mean([r.full.coverage for r in sub]),
                "member_sources_per_answer": mean([r.member_sources for r in sub]),
                "stored_sources_per_answer": mean([r.stored_sources for r in sub]),
            }
        holds = (
            full_support - member_support <= HIDDEN_TOLERANCE
            and full_cov - member_cov <= HIDDEN_TOLERANCE
            and all(r.prose_identical for r in rows)
        )
        return {
            "questions": len(rows),
            "full_support": full_support,
            "member_support": member_support,
            "full_coverage": full_cov,
            "member_coverage": member_cov,
            "prose_identical": sum(r.prose_identical for r in rows),
            "internal_citations_hidden": sum(r.internal_cited for r in rows),
            "quality_holds": holds,
            "tolerance": HIDDEN_TOLERANCE,
            "by_kind": by_kind,
            "failures": self.failures,
        }


def view_scores(
    text: str, retrieved: Sequence[str], gold: Sequence[str], judge: SupportJudge
) -> ViewScores:
    """Support of the text's claims by the retrieved cards, and coverage of the gold cards."""
    claims = [s for s in split_sentences(strip_markers(text)) if judgeable(s)]
    judge.warm([*retrieved, *gold], claims)
    if not claims:
        return ViewScores(0.0, 0.0)
    support = sum(judge.supports(s, list(retrieved)) for s in claims) / len(claims)
    covered = sum(any(judge.supports(s, [g]) for s in claims) for g in gold)
    return ViewScores(support, covered / len(gold) if gold else 0.0)


def replay_questions(
    client: Any,
    questions: Sequence[dict[str, Any]],
    judge: SupportJudge,
    tokens: Any,
    asked: list[str] | None = None,
) -> ReplayResult:
    """Ask each question as a member, read the stored turn as an admin, score both views."""
    member = {"Authorization": f"Bearer {tokens.member}"}
    admin = {"Authorization": f"Bearer {tokens.admin}"}
    result = ReplayResult()
    for q in questions:
        if asked is not None:
            asked.append(str(q["question"]))  # the member's own words from now on
        resp = client.post("/api/v1/chat", json={"message": q["question"]}, headers=member)
        if resp.status_code != 200:
            result.failures.append(f"{q['id']}: chat HTTP {resp.status_code}")
            continue
        served = resp.json()
        stored_resp = client.get(
            f"/api/v1/admin/conversations/{served['conversation_id']}", headers=admin
        )
        if stored_resp.status_code != 200:
            result.failures.append(f"{q['id']}: admin view HTTP {stored_resp.status_code}")
            continue
        stored = stored_resp.json()
        message = next(
            (m for m in stored["messages"] if str(m["id"]) == str(served["message_id"])), None
        )
        if message is None:
            result.failures.append(f"{q['id']}: stored message {served['message_id']} missing")
            continue
        events = [
            e
            for e in stored.get("retrieval_events") or []
            if str(e.get("message_id")) == str(message["id"])
        ]
        retrieved = [
            str(e["card_id"]) for e in sorted(events, key=lambda e: e.get("final_rank") or 0)
        ]
        gold = [str(g) for g in q.get("gold", [])]
        sources = message.get("sources") or []
        result.rows.append(
            ReplayRow(
                question_id=str(q["id"]),
                kind=str(q.get("kind", "")),
                full=view_scores(message["content"], retrieved, gold, judge),
                member=view_scores(served["answer"], retrieved, gold, judge),
                prose_identical=strip_markers(message["content"]).strip()
                == served["answer"].strip(),
                stored_sources=len(sources),
                member_sources=len(served.get("sources") or []),
                internal_cited=sum(1 for s in sources if not (s.get("metadata") or {}).get("url")),
                citations=score_answer(message["content"], sources, judge),
                hybrid_path=served.get("hybrid_path"),
            )
        )
    return result
