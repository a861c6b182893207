"""The ``citewall eval`` command (registered by ``citewall.cli``): full evaluation and gate.

Exit codes: 0 when the gate passes, nothing regressed beyond tolerance and answer quality holds
with citations hidden; 1 otherwise (the report says why); 2 for a usage or configuration error.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import typer


def run(
    out: Path = typer.Option(Path("reports"), "--out", help="Directory for eval.md/.html/.json."),
    fast: bool = typer.Option(
        False, "--fast", help="The subset the test command runs (about a minute)."
    ),
    update_baseline: bool = typer.Option(
        False, "--update-baseline", help="Record this run's metrics as evals/baseline.json."
    ),
    split: str = typer.Option("test", "--split", help="Labelled split to measure: test or dev."),
    baseline: Path | None = typer.Option(
        None, "--baseline", help="Baseline file (default: evals/baseline.json in the repo)."
    ),
    work_dir: Path | None = typer.Option(
        None, "--work-dir", help="Keep the throwaway data dir here (default: a temp dir)."
    ),
) -> None:
    """Measure retrieval, citation quality and hidden-citation answer quality, run the
    red-team gate (extractive generator and an adversarial model), write the report and
    compare with the committed baseline."""
    from citewall.cli.errors import cli_errors

    if split not in {"test", "dev"}:
        raise typer.BadParameter(f"--split must be test or dev, got {split!r}")
    logging.basicConfig(level=logging.WARNING)
    with cli_errors():
        from citewall.evals.harness import DEFAULT_BASELINE, EvalOptions, run_evaluation

        options = EvalOptions(
            out=out,
            fast=fast,
            split=split,  # type: ignore[arg-type]
            update_baseline=update_baseline,
            baseline=baseline or DEFAULT_BASELINE,
            work_dir=work_dir,
        )
        t0 = time.perf_counter()
        run_ = run_evaluation(options, progress=lambda msg: typer.echo(f"- {msg}", err=True))
    result = run_.result
    typer.echo(f"profile {result.profile}: {time.perf_counter() - t0:.1f} s")
    for path, scores in result.retrieval.items():
        typer.echo(
            f"retrieval {path:<7} ({scores.get('label')}): nDCG@10 {scores['ndcg@10']:.3f}  "
            f"R@10 {scores['recall@10']:.3f}  MRR {scores['mrr']:.3f}"
        )
    c = result.citations
    if c:
        typer.echo(
            f"citations: recall {c['citation_recall']:.3f}  precision {c['citation_precision']:.3f}"
        )
    h = result.hidden
    if h:
        typer.echo(
            f"hidden citations: support {h['full_support']:.3f} -> {h['member_support']:.3f}, "
            f"coverage {h['full_coverage']:.3f} -> {h['member_coverage']:.3f}, "
            f"holds: {h['quality_holds']}"
        )
    failures = result.gate_failures
    typer.echo(f"red-team gate: {len(result.redteam) - len(failures)}/{len(result.redteam)} pass")
    for row in failures:
        typer.echo(f"  FAIL {row['case']} [{row['generator']}]: {row['reason']}")
    for comp in result.regressions:
        typer.echo(
            f"  REGRESSED {comp.metric}: {comp.baseline} -> {comp.current} (tol {comp.tolerance})"
        )
    if result.baseline_note:
        typer.echo(result.baseline_note)
    for kind, written in run_.files.items():
        typer.echo(f"report ({kind}): {written}")
    raise typer.Exit(run_.exit_code)
