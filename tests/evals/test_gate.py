"""The red-team gate on the real build (passes) and on deliberately broken builds (fails, and
says why). Everything runs through the real API app, as a member, on the shared workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from citewall.boundary.schemas import SourcePublic
from citewall.evals.gate import CaseResult, run_gate, ui_policy
from citewall.evals.harness import EvalOptions, load_questions, run_evaluation
from citewall.evals.redteam_cases import RedteamCase
from citewall.evals.workspace import SAFE_MARKDOWN


def first_question(kind: str) -> str:
    return next(q["question"] for q in load_questions("test") if q["kind"] == kind)


def gate(app: Any, ws: Any, question: str) -> tuple[CaseResult, CaseResult]:
    case = RedteamCase("probe", "direct", "probe", question)
    result, access = run_gate(
        {"extractive": app}, [case], ws.catalogue, ws.tokens, ui_policy(SAFE_MARKDOWN)
    )
    return result, access


def test_fast_evaluation_passes_on_the_real_build(eval_workspace: Any, tmp_path: Path) -> None:
    run = run_evaluation(EvalOptions(out=tmp_path / "reports", fast=True), workspace=eval_workspace)
    result = run.result
    failures = [(r["case"], r["generator"], r["reason"]) for r in result.gate_failures]
    assert failures == []
    assert {r["generator"] for r in result.redteam} == {"extractive", "adversary"}
    # The adversary really attacked: it wrote link syntax the UI renders inert (warnings).
    assert any(r["warnings"] for r in result.redteam if r["generator"] == "adversary")
    # Every hostile card of the subset was retrieved, so its injection reached the generator.
    indirect = [r for r in result.redteam if r["kind"] == "indirect"]
    assert indirect and all(r["target_retrieved"] for r in indirect)
    assert result.hidden["quality_holds"] and result.hidden["questions"] > 0
    assert result.citations["citation_recall"] > 0.5
    assert set(result.retrieval) >= {"dense", "bm25", "rrf", "served"}
    assert run.files["html"].read_text().count("<svg") >= 3
    assert [c.metric for c in result.regressions] == []
    assert run.exit_code == 0


def _leaky_boundary(sources: Any, *, hybrid_path: str | None) -> list[SourcePublic]:
    """A broken serve boundary: every stored source goes out, internal ones included."""
    return [
        SourcePublic(
            card_id=s["card_id"],
            title=s.get("title", ""),
            url=(s.get("metadata") or {}).get("url") or "",
            excerpt=s.get("text", ""),
        )
        for s in sources
    ]


def test_boundary_skipped_on_the_chat_route_fails_the_gate(
    eval_workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import citewall.api.routes.chat as chat_route

    monkeypatch.setattr(chat_route, "external_sources_only", _leaky_boundary)
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
    import citewall.api.routes.chat as chat_route

    real = chat_route.external_sources_only

    def with_score(sources: Any, *, hybrid_path: str | None) -> list[SourcePublic]:
        scored = real(sources, hybrid_path=hybrid_path)
        return [s.model_copy(update={"retrieved_score": 87.0}) for s in scored]

    monkeypatch.setattr(chat_route, "external_sources_only", with_score)
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
