"""``citewall eval kb QUESTIONS.jsonl``: the harness's figures on the configured deployment.

The deployment is the one ``citewall serve`` would run: its settings, database, Chroma and
lexical index, built by ``Runtime.from_settings``. Each question is answered by the production
pipeline with the server's policy (``Runtime.answer_policy``: condensation with the
``conversation``, the KB's abstention calibration, the verbatim cap, the staff-only check) and
served through the member boundary (``prose_only``, ``external_sources_only``); nothing is
stored, so the run adds no conversation, gap or analytics row to the deployment.

Each question is asked as one member (``own_kb.viewers``): of the run's ``--group`` groups (a
member in no group by default) or of the question's own ``groups``. Its answer and its
retrieval scores both come from that member's ``retrievable_for``; a question whose expected
card that member may not see is a warning of the report, not a silent miss.

Figures, each computed by the harness's own code:

- retrieval per path (``retrieval.paths.evaluate_paths``, with the pipeline's condensed query):
  hit@1, hit@5, MRR, nDCG@10, recall@10; a deployment without its lexical index scores BM25 and
  RRF as ranking nothing and says why;
- ``answered`` rate on the answerable questions, ``not_found`` recall on the unanswerable ones
  (``quality.abstention.abstention``);
- nugget recall where ``facts`` are given, and the off-topic rate (``quality.answers``, the
  nugget judge fitted on its hand labels);
- citation recall and precision of the answered answers (``quality.citations``; the support
  judge over the deployment's cards, its thresholds fitted on the demo's support labels);
- dangling references in the member's prose (``quality.dangling_check.rate_answers``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from citewall.boundary.external import external_sources_only
from citewall.boundary.prose import prose_only
from citewall.chat.pipeline import Answer, answer_question
from citewall.errors import UserError
from citewall.kb.audiences import retrievable_for
from citewall.retrieval.retriever import HybridRetriever
from citewall.runtime import Runtime
from citewall.storage.cards import every_card
from citewall.storage.models import CardRow
from citewall.text.question import clean_question
from citewall_evals.harness import judge_calibrated_on_demo
from citewall_evals.member_answers import MemberAnswer
from citewall_evals.own_kb.gate import PROFILE, Thresholds
from citewall_evals.own_kb.questions import KbQuestion, load_kb_questions
from citewall_evals.own_kb.result import KbEvalResult
from citewall_evals.own_kb.viewers import RunViewers, outside_warning
from citewall_evals.quality.abstention import abstention
from citewall_evals.quality.answers import (
    NuggetJudge,
    ScoredAnswer,
    load_nugget_labels,
    score_answers,
)
from citewall_evals.quality.citations import CitationCounts, score_answer
from citewall_evals.quality.dangling_check import rate_answers
from citewall_evals.questions import Question
from citewall_evals.redteam.catalogue import Catalogue, KbCard
from citewall_evals.report import baseline as baseline_mod
from citewall_evals.retrieval.paths import evaluate_paths


@dataclass(frozen=True, slots=True)
class KbEvalOptions:
    questions: Path
    thresholds: Thresholds = field(default_factory=lambda: Thresholds({}))
    baseline: Path | None = None
    save_baseline: Path | None = None
    #: The run's groups (``viewers.run_groups``): each question is asked as a member of them.
    viewers: RunViewers = field(default_factory=RunViewers)


def catalogue_of(rows: Sequence[CardRow]) -> Catalogue:
    """The deployment's cards as the judges and the dangling-reference check read them."""
    return Catalogue.from_cards(
        [
            KbCard(
                id=r.id,
                title=r.title,
                body=r.body,
                url=r.url,
                metadata=dict(r.meta or {}),
                reply=r.reply,
            )
            for r in rows
        ]
    )


def resolve_expected(
    questions: Sequence[KbQuestion], rows: Sequence[CardRow], name: str
) -> dict[str, tuple[str, ...]]:
    """Question id -> the card ids its ``expected`` names (an id, or a card's URL, with or
    without a trailing slash). A name no card has is a ``UserError`` naming the question."""
    ids = {r.id for r in rows}
    by_url = {r.url.rstrip("/"): r.id for r in rows if r.url}
    out: dict[str, tuple[str, ...]] = {}
    for q in questions:
        cards: list[str] = []
        for item in q.expected:
            card = item if item in ids else by_url.get(item.rstrip("/"))
            if card is None:
                raise UserError(
                    f"{name}: {q.id}: expected: {item!r} is neither a card id nor a card URL of "
                    f"this deployment ({len(ids)} cards; ingest it, or fix the name)"
                )
            if card not in cards:
                cards.append(card)
        out[q.id] = tuple(cards)
    return out


def _ask(runtime: Runtime, q: KbQuestion, viewers: RunViewers) -> Answer:
    return answer_question(
        clean_question(q.question),
        retriever=runtime.retriever,
        generator=runtime.generator,
        embedder=runtime.embedder,
        viewer=viewers.of(q),
        history=q.conversation,
        policy=runtime.answer_policy(),
    )


def _served(generator: str, q: KbQuestion, answer: Answer) -> MemberAnswer:
    """What the member would have received, as the dangling-reference check reads it."""
    return MemberAnswer(
        generator=generator,
        question_id=q.id,
        question=q.question,
        answer=prose_only(answer.content),
        status=200,
        external_sources=len(external_sources_only(answer.sources, hybrid_path=answer.hybrid_path)),
        answer_status=answer.answer_status,
    )


def evaluate_own_kb(
    runtime: Runtime,
    options: KbEvalOptions,
    *,
    progress: Callable[[str], None] = lambda _msg: None,
) -> KbEvalResult:
    """Measure the deployment of ``runtime`` on the questions file, then apply the thresholds
    and the baseline. Never raises for a failed figure: it is in the result."""
    questions = load_kb_questions(options.questions)
    if options.baseline is not None:
        saved_figures(options.baseline)
    name = str(options.questions)
    timings: dict[str, float] = {}
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    with runtime.session_factory() as session:
        rows = every_card(session)
    if not rows:
        raise UserError("the deployment's knowledge base is empty: run citewall ingest first")
    gold = resolve_expected([q for q in questions if not q.unanswerable], rows, name)
    catalogue = catalogue_of(rows)
    t0 = time.perf_counter()
    judge, calibration = judge_calibrated_on_demo(runtime.embedder, catalogue.cards)
    nugget_judge = NuggetJudge(runtime.embedder)
    nugget_calibration = nugget_judge.calibrate(load_nugget_labels()).as_dict()
    timings["judges"] = round(time.perf_counter() - t0, 2)

    progress(f"answering {len(questions)} questions with the deployment's pipeline")
    t0 = time.perf_counter()
    viewers = options.viewers
    answers = {q.id: _ask(runtime, q, viewers) for q in questions}
    timings["answers"] = round(time.perf_counter() - t0, 2)

    answerable = [q for q in questions if not q.unanswerable]
    retriever = runtime.retriever
    if not isinstance(retriever, HybridRetriever):
        raise UserError(
            "citewall eval kb measures the hybrid retriever; this deployment runs another"
        )
    t0 = time.perf_counter()
    asked = [
        Question(q.id, answers[q.id].retrieval_query or q.question, gold[q.id]) for q in answerable
    ]
    readers = [retrievable_for(viewers.of(q)) for q in answerable]
    retrieval = (
        evaluate_paths(retriever, asked, lexical_required=False, cards=readers) if asked else {}
    )
    timings["retrieval"] = round(time.perf_counter() - t0, 2)

    progress("scoring citations, facts and dangling references")
    t0 = time.perf_counter()
    citations = CitationCounts()
    for q in questions:
        answer = answers[q.id]
        if answer.answer_status == "answered":
            sources = [s.model_dump() for s in answer.sources]
            citations.add(score_answer(answer.content, sources, judge))
    with_facts = [q for q in answerable if q.facts]
    quality = None
    if with_facts:
        scored = [
            ScoredAnswer(q.id, "", None)
            if answers[q.id].answer_status != "answered"
            else ScoredAnswer(q.id, prose_only(answers[q.id].content), answers[q.id].content)
            for q in with_facts
        ]
        quality = score_answers(
            scored, {q.id: q.facts for q in with_facts}, gold, nugget_judge, judge
        ).as_dict()
    generator = runtime.settings.generator
    served = [_served(generator, q, answers[q.id]) for q in questions]
    dangling = rate_answers(generator, served, catalogue.bare_internal_titles, role="shipped")
    timings["scoring"] = round(time.perf_counter() - t0, 2)

    audiences = {r.id: tuple(r.audiences or ()) for r in rows}
    warnings = [
        w
        for q in answerable
        if (w := outside_warning(q, gold[q.id], audiences, viewers)) is not None
    ]
    result = KbEvalResult(
        started_at=started,
        questions_file=name,
        asked_as=viewers.describe(questions),
        warnings=warnings,
        environment={
            "cards": len(rows),
            "internal cards": len(catalogue.internal_ids),
            "questions": len(questions),
            "answerable / unanswerable": f"{len(answerable)} / {len(questions) - len(answerable)}",
            "with facts": len(with_facts),
            "follow-ups": sum(1 for q in questions if q.conversation),
            "generator": generator,
            "reranker": str(runtime.retriever_status().get("reranker", {}).get("status")),
        },
        timings_s=timings,
        judge={"support": calibration, "nuggets": nugget_calibration},
        retrieval=retrieval,
        abstention=abstention(
            [("unanswerable", answers[q.id].answer_status) for q in questions if q.unanswerable],
            [answers[q.id].answer_status for q in answerable],
        ),
        citations=citations,
        answers=quality,
        dangling=dangling.as_dict(),
        per_question=[
            _row(q, answers[q.id], gold.get(q.id, ()), viewers, audiences) for q in questions
        ],
    )
    result.threshold_failures = options.thresholds.failures(result.metrics())
    _baseline(result, options)
    return result


def _row(
    q: KbQuestion,
    answer: Answer,
    gold: tuple[str, ...],
    viewers: RunViewers,
    audiences: dict[str, tuple[str, ...]],
) -> dict[str, Any]:
    ranking = [c.id for c in answer.context.chunks]
    rank: int | str | None = next((i + 1 for i, cid in enumerate(ranking) if cid in gold), None)
    cards = retrievable_for(viewers.of(q))
    if rank is None and gold and not any(cards.allows(audiences.get(c, ())) for c in gold):
        rank = "outside groups"
    return {
        "id": q.id,
        "question": q.question,
        "groups": ", ".join(viewers.groups_of(q)) or "none",
        "expected": "unanswerable" if q.unanswerable else ", ".join(gold),
        "status": answer.answer_status,
        "expected card's rank": rank,
        "cited": ", ".join(dict.fromkeys(s.card_id for s in answer.sources)),
    }


def saved_figures(path: Path) -> dict[str, float]:
    """The figures a ``--save-baseline`` run wrote to ``path``; ``UserError`` when there are
    none (checked before the run too, so a typo costs no minutes)."""
    if not path.is_file():
        raise UserError(f"{path}: no such baseline file (write one with --save-baseline)")
    table = baseline_mod.profile_metrics(baseline_mod.load_baseline(path), PROFILE)
    if table is None:
        raise UserError(f"{path}: no {PROFILE!r} figures in it (write them with --save-baseline)")
    return table


def _baseline(result: KbEvalResult, options: KbEvalOptions) -> None:
    current = result.metrics()
    if options.save_baseline is not None:
        meta = {"updated": result.started_at, "questions": result.questions_file}
        baseline_mod.write_baseline(options.save_baseline, PROFILE, current, meta)
        result.baseline_note = f"baseline saved in {options.save_baseline}"
    if options.baseline is None:
        return
    result.comparisons = baseline_mod.compare(saved_figures(options.baseline), current)
    note = f"compared with {options.baseline}"
    result.baseline_note = f"{result.baseline_note}; {note}" if result.baseline_note else note
