"""How the server answers: abstention (tuned on dev, measured on the split), follow-up
retrieval and small talk. Citation and answer quality of the answers themselves are scored
on the replayed answers (``harness``); this module measures the decisions around them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fastapi.testclient import TestClient

from citewall.kb.audiences import EVERY_CARD
from citewall.retrieval.answerability import Decider
from citewall.retrieval.factory import configured_thresholds
from citewall.retrieval.types import RetrievedContext
from citewall_evals.data import DEMO, Dataset
from citewall_evals.member_answers import MemberAnswer, ask_as_member
from citewall_evals.quality.abstention import (
    abstention,
    load_unanswerable,
    signals_of,
    tune,
)
from citewall_evals.questions import Question, labelled_split
from citewall_evals.retrieval.followups import load_followups, score_followups
from citewall_evals.workspace import EvalWorkspace

#: Messages that ask nothing: each must get a short reply, no sources, ``not_found``.
SMALL_TALK = ("hi", "Hello!", "thanks", "thank you so much", "ok bye", "good morning")
#: Questions per set in the fast profile.
FAST_UNANSWERABLE = 12
FAST_FOLLOWUPS = 16


def tune_on_dev(ws: EvalWorkspace, dataset: Dataset = DEMO) -> dict[str, Any]:
    """The thresholds the dev split recommends (compare with the configured ones)."""
    retriever = ws.runtime.retriever
    answerable = signals_of(retriever, [q.question for q in labelled_split("dev", dataset)])
    unanswerable = signals_of(retriever, [u.question for u in load_unanswerable("dev", dataset)])
    tuned = tune(answerable, unanswerable).as_dict()
    s = ws.settings
    tuned["configured"] = {"min_dense": s.abstain_min_dense, "min_coverage": s.abstain_min_coverage}
    decider = ws.runtime.thresholds
    tuned["in_use"] = decider.status() if decider is not None else {"source": "off"}
    return tuned


def compare_decisions(
    ws: EvalWorkspace, answerable: Sequence[str], unanswerable: Sequence[tuple[str, str]]
) -> dict[str, Any]:
    """Before/after on the split: the answerability decision with the fixed thresholds of the
    settings and with the KB's calibration (the runtime's), on the same retrieved contexts.

    ``unanswerable`` holds (kind, question). The decision alone: an answer can still become
    ``not_found`` later when nothing in the context supports it."""
    retriever = ws.runtime.retriever
    contexts = [retriever.retrieve(q, cards=EVERY_CARD) for q in answerable]
    u_contexts = [retriever.retrieve(q, cards=EVERY_CARD) for _, q in unanswerable]
    out: dict[str, Any] = {}
    deciders: dict[str, Decider | None] = {
        "fixed": configured_thresholds(ws.settings) if ws.settings.abstention else None,
        "calibrated": ws.runtime.thresholds,
    }
    for name, decider in deciders.items():
        if decider is None:
            continue

        def status(question: str, context: RetrievedContext, decide: Decider = decider) -> str:
            ok = decide.answerable(decide.measure(question, context))
            return "answered" if ok else "not_found"

        out[name] = abstention(
            [(kind, status(q, c)) for (kind, q), c in zip(unanswerable, u_contexts, strict=True)],
            [status(q, c) for q, c in zip(answerable, contexts, strict=True)],
        ).as_dict()
    return out


def _statuses(answers: Sequence[MemberAnswer]) -> list[str]:
    """Each answer's status; a failed request counts as ``error`` (neither answered nor
    not_found, so it lowers both rates; replay failures are reported by the harness)."""
    return [a.answer_status if a.ok else "error" for a in answers]


def measure_answering(
    ws: EvalWorkspace,
    split: str,
    answerable: Sequence[MemberAnswer],
    *,
    fast: bool,
    say: Callable[[str], None],
    dataset: Dataset = DEMO,
) -> dict[str, Any]:
    """Abstention (and its control), follow-up retrieval (and its control), small talk.

    ``answerable`` are the extractive server's member answers to the split's labelled
    questions (the replay), whose statuses give the answered rate.
    """
    unanswerable = load_unanswerable(split, dataset)
    if fast:
        unanswerable = unanswerable[:FAST_UNANSWERABLE]
    asked = [Question(u.id, u.question, ()) for u in unanswerable]
    kinds = [u.kind for u in unanswerable]
    say(f"abstention: {len(asked)} unanswerable {split} questions, with and without the check")
    out: dict[str, Any] = {"tuned_on_dev": tune_on_dev(ws, dataset)}
    answered_statuses = _statuses(answerable)
    with TestClient(ws.app_for("extractive"), raise_server_exceptions=False) as client:
        statuses = _statuses(ask_as_member(client, asked, ws.tokens.member, "extractive"))
        small = ask_as_member(
            client,
            [Question(f"smalltalk-{i}", m, ()) for i, m in enumerate(SMALL_TALK)],
            ws.tokens.member,
            "extractive",
        )
    with TestClient(ws.app_without_abstention(), raise_server_exceptions=False) as client:
        control = _statuses(ask_as_member(client, asked, ws.tokens.member, "no-abstention"))
    out["abstention"] = abstention(
        list(zip(kinds, statuses, strict=True)), answered_statuses
    ).as_dict()
    out["abstention_control"] = abstention(list(zip(kinds, control, strict=True)), []).as_dict()
    out["abstention_decision"] = compare_decisions(
        ws,
        [a.question for a in answerable],
        [(u.kind, u.question) for u in unanswerable],
    )
    out["small_talk"] = {
        "messages": len(small),
        "small_talk_without_sources": sum(
            a.ok and a.answer_status == "small_talk" and a.external_sources == 0 for a in small
        ),
    }
    items = load_followups(split, dataset)
    if fast:
        items = [i for i in items if i.kind == "followup"][:FAST_FOLLOWUPS] + [
            i for i in items if i.kind == "switch"
        ][: FAST_FOLLOWUPS // 4]
    say(f"follow-ups: {len(items)} {split} conversations, four ways each")
    out["followups"] = score_followups(ws.runtime.retriever, ws.runtime.condenser, items).as_dict()
    return out
