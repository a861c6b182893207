"""`citewall eval kb` asks and retrieves every question as one member: of ``--group`` (none:
a member in no group) or of the question's own ``groups``.

The KB this test writes has a public status-page card and an uptime guarantee for the
``enterprise`` group only. Asked as a member in no group, the guarantee is outside the run's
groups: the headline retrieval says so (a miss) and so does the answer (it cannot draw on it),
with a warning naming the card; asked as an enterprise member, both find it. The negative
control scores the same question with every card visible while answering as no group: those two
views disagree, so it is the shared viewer that makes the report's halves agree.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from citewall.chat.pipeline import answer_question
from citewall.cli.main import app
from citewall.config import get_settings, load_settings
from citewall.ingest.pipeline import ingest_paths
from citewall.kb.audiences import EVERY_CARD, Viewer
from citewall.retrieval.retriever import HybridRetriever
from citewall.runtime import Runtime
from citewall.text.question import clean_question
from citewall_evals.questions import Question
from citewall_evals.retrieval.paths import evaluate_paths

SLA = "ent-uptime-sla"
CARDS: list[dict[str, Any]] = [
    {
        "id": "status-page",
        "title": "Status page",
        "body": "Our status page shows the current state of every service and past incidents. "
        "Subscribe to it to get an email when an incident starts.",
        "url": "https://help.orbit.test/status",
    },
    {
        "id": SLA,
        "title": "Enterprise uptime guarantee",
        "body": "Enterprise plans have a 99.95% monthly uptime guarantee. When uptime falls "
        "below it, the account receives service credits of 10% of the monthly fee.",
        "url": "https://help.orbit.test/enterprise/uptime-sla",
        "audiences": ["enterprise"],
    },
    {
        "id": "password-reset",
        "title": "Reset your password",
        "body": "Choose Forgot password on the sign-in page and follow the link we email you. "
        "The link works for one hour.",
        "url": "https://help.orbit.test/password",
    },
    {
        "id": "invoices",
        "title": "Download invoices",
        "body": "Invoices are under Settings, Billing. Each invoice downloads as a PDF.",
        "url": "https://help.orbit.test/invoices",
    },
]
SLA_QUESTION = "What monthly uptime guarantee do enterprise plans have?"
QUESTIONS: list[dict[str, Any]] = [
    {
        "id": "sla",
        "question": SLA_QUESTION,
        "expected": [SLA],
        "facts": ["Enterprise plans have a 99.95% monthly uptime guarantee"],
    },
    {"id": "invoices", "question": "Where do I download my invoices?", "expected": ["invoices"]},
    {
        "id": "password",
        "question": "How do I reset my password?",
        "expected": ["password-reset"],
    },
]


@pytest.fixture
def deployment(tmp_path: Path, embedder: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The test's KB ingested by the real ingest in ``tmp_path``; the CLI points at it."""
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.chdir(tmp_path)
    for name, value in {
        "CITEWALL_DATA_DIR": str(data),
        "CITEWALL_GENERATOR": "extractive",
        "CITEWALL_RERANKER_ENABLED": "false",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CITEWALL_DATABASE_URL", raising=False)
    monkeypatch.delenv("CITEWALL_CHROMA_URL", raising=False)
    get_settings.cache_clear()
    settings = load_settings()
    kb_file = tmp_path / "orbit.jsonl"
    kb_file.write_text("".join(json.dumps(c) + "\n" for c in CARDS), encoding="utf-8")
    report = ingest_paths([kb_file], settings, embedder=embedder, progress=False)
    assert not report.refused, report.summary()
    yield settings
    get_settings.cache_clear()


def write_questions(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(q) + "\n" for q in rows), encoding="utf-8")


def eval_kb(out: str, *argv: str) -> tuple[Any, dict[str, Any]]:
    result = CliRunner().invoke(app, ["eval", "kb", "questions.jsonl", "--out", out, *argv])
    assert "Traceback" not in result.output, result.output
    assert result.exit_code == 0, result.output
    return result, json.loads((Path(out) / "eval-kb.json").read_text(encoding="utf-8"))


def in_answers_top5(report: dict[str, Any]) -> float:
    """The share of answerable questions whose answer's own context holds an expected card in
    its top 5: what the headline served hit@5 must equal when both halves see the same cards."""
    rows = [r for r in report["per_question"] if r["expected"] != "unanswerable"]
    ranks = [r["expected card's rank"] for r in rows]
    return sum(1 for r in ranks if isinstance(r, int) and r <= 5) / len(rows)


def row(report: dict[str, Any], qid: str) -> dict[str, Any]:
    return next(r for r in report["per_question"] if r["id"] == qid)


def test_retrieval_and_answers_are_measured_as_the_same_member(
    deployment: Any, tmp_path: Path
) -> None:
    write_questions(tmp_path / "questions.jsonl", QUESTIONS)

    public, report = eval_kb("public")
    assert report["asked_as"] == "a member in no group (no --group)"
    assert report["retrieval"]["served"]["hit@5"] == in_answers_top5(report) == 2 / 3
    sla = row(report, "sla")
    assert sla["expected card's rank"] == "outside groups"
    assert SLA not in sla["cited"]
    assert report["warnings"] == [
        f"sla: expected card {SLA} (for enterprise) is outside the groups of this run "
        "(a member in no group): scored as a miss; run with --group, or give the question "
        "the asking member's groups"
    ]
    assert f"WARNING sla: expected card {SLA} (for enterprise)" in public.output
    markdown = (tmp_path / "public" / "eval-kb.md").read_text(encoding="utf-8")
    assert "Asked and retrieved as a member in no group (no --group)." in markdown
    assert "- warning: sla: expected card" in markdown

    enterprise, report = eval_kb("enterprise", "--group", "enterprise")
    assert "asked and retrieved as a member of enterprise (--group)" in enterprise.output
    assert report["retrieval"]["served"]["hit@5"] == in_answers_top5(report) == 1.0
    sla = row(report, "sla")
    assert sla["groups"] == "enterprise" and isinstance(sla["expected card's rank"], int)
    assert SLA in sla["cited"]
    assert report["warnings"] == []
    assert report["answers"]["nugget_recall"] == 1.0


def test_a_question_saved_with_its_members_groups_is_asked_as_that_member(
    deployment: Any, tmp_path: Path
) -> None:
    write_questions(tmp_path / "questions.jsonl", [{**QUESTIONS[0], "groups": ["enterprise"]}])
    _, report = eval_kb("saved")
    assert report["asked_as"] == (
        "a member in no group (no --group); 1 question as their own groups (groups field)"
    )
    assert report["retrieval"]["served"]["hit@5"] == in_answers_top5(report) == 1.0
    assert report["warnings"] == []


def test_a_bad_group_is_exit_2_before_anything_loads(deployment: Any, tmp_path: Path) -> None:
    write_questions(tmp_path / "questions.jsonl", QUESTIONS)
    bad = CliRunner().invoke(app, ["eval", "kb", "questions.jsonl", "--group", "Enterprise Plan"])
    assert bad.exit_code == 2
    assert "error: --group: 'Enterprise Plan' is not a group name" in bad.output


def test_negative_control_every_card_retrieval_disagrees_with_a_no_group_answer(
    deployment: Any,
) -> None:
    """What the report did before the viewer was shared: retrieval scored as staff, the answer
    generated as a member in no group. On the restricted question the two disagree."""
    runtime = Runtime.from_settings(deployment)
    try:
        retriever = runtime.retriever
        assert isinstance(retriever, HybridRetriever)
        staff = evaluate_paths(
            retriever, [Question("sla", SLA_QUESTION, (SLA,))], lexical_required=False
        )
        assert staff["served"].hit_at_5 == 1.0
        assert EVERY_CARD.everything
        answer = answer_question(
            clean_question(SLA_QUESTION),
            retriever=retriever,
            generator=runtime.generator,
            embedder=runtime.embedder,
            viewer=Viewer.member([]),
            policy=runtime.answer_policy(),
        )
        assert SLA not in [c.id for c in answer.context.chunks]
    finally:
        runtime.close()
