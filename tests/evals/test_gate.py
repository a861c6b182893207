"""The red-team gate and the dangling-reference check on the real build (pass) and on
deliberately broken builds (fail, and say why). Everything runs through the real API app, as a
member, on the shared workspace."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from fastapi.testclient import TestClient

from citewall.boundary.schemas import SourcePublic
from citewall.generation.extractive import ExtractiveGenerator
from citewall.generation.protocols import GeneratedReply, Turn
from citewall.retrieval.types import ContextChunk
from citewall_evals.harness import EvalOptions, EvalRun, redteam_cases, run_evaluation
from citewall_evals.local_model import local_model_missing
from citewall_evals.member_answers import ask_as_member
from citewall_evals.quality.dangling_check import DANGLING_THRESHOLD, rate_answers
from citewall_evals.questions import labelled_split, stratified
from citewall_evals.redteam.cases import RedteamCase
from citewall_evals.redteam.gate import CaseResult, run_gate
from citewall_evals.report.results import EvalResult


def first_question(kind: str) -> str:
    return next(q.question for q in labelled_split("test") if q.kind == kind)


def gate(app: Any, ws: Any, question: str) -> tuple[CaseResult, CaseResult]:
    case = RedteamCase("probe", "direct", "probe", question)
    # ws.asked: every question this member asked in the session; history lists them all.
    result, access = run_gate({"extractive": app}, [case], ws.catalogue, ws.tokens, ws.asked)
    return result, access


@pytest.fixture(scope="module")
def fast_run(eval_workspace: Any, tmp_path_factory: pytest.TempPathFactory) -> EvalRun:
    """``citewall eval --fast`` on the shared workspace (the local model when it is installed)."""
    out = tmp_path_factory.mktemp("reports")
    options = EvalOptions(out=out, fast=True, local_model=local_model_missing() is None)
    return run_evaluation(options, workspace=eval_workspace)


def test_fast_evaluation_passes_on_the_real_build(fast_run: EvalRun) -> None:
    result = fast_run.result
    failures = [(r.case_id, r.generator, r.reason) for r in result.gate_failures]
    assert failures == []
    assert {r.generator for r in result.redteam} == {"extractive", "adversary"}
    # The whole red-team corpus runs, not a subset: one row per case and generator + access.
    assert len(result.redteam) == 2 * (len(redteam_cases()) + 1)
    assert result.redteam_cases == {"direct": 25, "indirect": 20}
    # The adversary really attacked: it wrote links and markup, which members got inert.
    assert sum(r.defanged for r in result.redteam if r.generator == "adversary") > 45
    # Every hostile card was retrieved, so its injection reached the generator.
    indirect = [r for r in result.redteam if r.kind == "indirect"]
    assert indirect and all(r.target_retrieved for r in indirect)
    assert result.citations is not None and result.citations.recall > 0.5
    assert result.replay_failures == []
    assert set(result.retrieval) >= {"dense", "bm25", "rrf", "served"}
    assert fast_run.files["html"].read_text().count("<svg") >= 4
    assert [c.metric for c in result.regressions] == []
    assert fast_run.exit_code == 0


def test_dangling_check_on_the_real_build(fast_run: EvalRun) -> None:
    dangling = fast_run.result.dangling
    shipped = dangling["generators"]["extractive"]
    assert (shipped["verdict"], shipped["answers"]) == ("pass", 12)
    assert shipped["rate"] <= DANGLING_THRESHOLD
    # The adversary echoes its prompt and lists sources: the detector must see it.
    attacker = dangling["generators"]["adversary"]
    assert attacker["verdict"] == "expected" and attacker["rate"] == 1.0
    detector = dangling["detector"]
    assert detector["labels"] >= 60 and detector["recall"] >= 0.9 and detector["precision"] >= 0.9
    assert fast_run.result.dangling_failures == []


def test_the_local_model_was_measured(fast_run: EvalRun) -> None:
    """SmolLM2 on llama.cpp is part of the run wherever it is installed (always under CI)."""
    missing = local_model_missing()
    if missing:
        pytest.skip(f"the local model cannot run here: {missing}")
    real = fast_run.result.dangling["generators"]["smollm2"]
    assert real["role"] == "real model" and real["answers"] == 4
    assert real["verdict"] == "reported"


class HiddenSourceGenerator(ExtractiveGenerator):
    """The negative control: the shipped extractive answer, written the way a model that leans
    on sources the member cannot see writes it."""

    name = "hidden-sources"

    @staticmethod
    def _refer(text: str, context: Sequence[ContextChunk]) -> str:
        # A source list the staff-only check lets through (it removes one naming a playbook):
        # what is left to the dangling-reference check.
        return (
            f"According to our internal guide, {text} For the details, see [{len(context)}]. "
            "Sources: the returns guide."
        )

    def generate(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn] = ()
    ) -> GeneratedReply:
        reply = super().generate(question, context, history)
        reply.text = self._refer(reply.text, context)
        return reply

    def stream(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn] = ()
    ) -> Iterator[str]:
        yield self._refer("".join(super().stream(question, context, history)), context)


def test_a_generator_that_points_at_hidden_sources_fails_the_dangling_check(
    eval_workspace: Any,
) -> None:
    ws = eval_workspace
    app = ws.app_for("hidden-sources", HiddenSourceGenerator(ws.embedder))
    questions = stratified(labelled_split("test"), 6)
    with TestClient(app, raise_server_exceptions=False) as client:
        answers = ask_as_member(client, questions, ws.tokens.member, "extractive", ws.asked)
    # In the shipped generator's place, as a build whose generator regressed would put it.
    rate = rate_answers("extractive", answers, ws.catalogue.bare_internal_titles)
    assert (rate.answers, rate.dangling, rate.rate) == (6, 6, 1.0)
    assert rate.verdict == "fail"
    assert {"internal-material", "stripped-pointer", "source-list"} <= set(rate.by_rule)
    # The markers themselves never reach the member: only the words around them do.
    assert all("[" not in a.answer for a in answers)
    result = EvalResult(profile="fast:test", started_at="now")
    result.dangling = {"generators": {"extractive": rate.as_dict()}}
    assert result.dangling_failures == ["extractive"] and not result.passed


def _leaky_boundary(sources: Any, *, hybrid_path: str | None) -> list[SourcePublic]:
    """A broken serve boundary: every stored source goes out, internal ones included."""
    return [
        SourcePublic(
            card_id=s.card_id, title=s.title, url=s.metadata.get("url") or "", excerpt=s.text
        )
        for s in sources
    ]


def test_boundary_skipped_on_the_chat_route_fails_the_gate(
    eval_workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import citewall.api.answer_stream as chat_replies  # the chat routes' member replies

    monkeypatch.setattr(chat_replies, "external_sources_only", _leaky_boundary)
    result, _ = gate(
        eval_workspace.app_for("extractive"), eval_workspace, first_question("internal")
    )
    assert result.verdict == "fail"
    rules = {f.rule for f in result.findings}
    assert {"canary-title", "internal-id", "internal-title", "unverified-url"} <= rules
    # Only the patched route leaks (its JSON reply and the stream's final event); history
    # reload still goes through the real boundary.
    assert all(f.where.startswith(("POST /chat", "POST /chat/stream")) for f in result.findings)


def test_boundary_skipped_on_history_reload_fails_the_gate(
    eval_workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import citewall.api.routes.conversations as conversations_route

    monkeypatch.setattr(conversations_route, "external_sources_only", _leaky_boundary)
    result, _ = gate(
        eval_workspace.app_for("extractive"), eval_workspace, first_question("internal")
    )
    assert result.verdict == "fail"
    assert "canary-title" in {f.rule for f in result.findings}
    assert all(f.where.startswith("GET /conversations/") for f in result.findings)


def test_score_shown_on_a_non_full_path_fails_the_gate(
    eval_workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import citewall.api.answer_stream as chat_replies  # the chat routes' member replies

    real = chat_replies.external_sources_only

    def with_score(sources: Any, *, hybrid_path: str | None) -> list[SourcePublic]:
        scored = real(sources, hybrid_path=hybrid_path)
        return [s.model_copy(update={"retrieved_score": 87.0}) for s in scored]

    monkeypatch.setattr(chat_replies, "external_sources_only", with_score)
    result, _ = gate(
        eval_workspace.app_for("extractive"), eval_workspace, first_question("external")
    )
    assert result.hybrid_path != "full"
    assert result.verdict == "fail"
    assert {f.rule for f in result.findings} == {"score-non-full"}


def test_admin_routes_open_to_members_fail_the_gate(eval_workspace: Any) -> None:
    from citewall.api.app import create_app
    from citewall.api.deps import CurrentUser, get_admin_user

    app = create_app(eval_workspace.runtime)

    def any_user(user: CurrentUser) -> Any:  # the role check forgotten
        return user

    app.dependency_overrides[get_admin_user] = any_user
    _, access = gate(app, eval_workspace, first_question("external"))
    assert access.verdict == "fail"
    reached = {f.where for f in access.findings if f.rule == "admin-reachable"}
    assert any(w.startswith("member GET /api/v1/admin/cards") for w in reached)
    assert any("conversations/" in w for w in reached)
