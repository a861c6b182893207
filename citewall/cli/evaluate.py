"""`citewall eval` sub-commands."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from citewall.cli.errors import cli_errors

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
) -> None:
    """Run the whole evaluation unless a sub-command (e.g. ``retrieval``) was named."""
    if ctx.invoked_subcommand is None:
        # Deferred: the evaluation loads models and FastAPI; `citewall --help` should not.
        from citewall.evals.cli import run

        run(
            out=out,
            fast=fast,
            update_baseline=update_baseline,
            split=split,
            baseline=None,
            work_dir=None,
        )


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
        # Deferred: the models and indexes take seconds to import; `citewall --help` should not.
        from citewall.config import get_settings
        from citewall.evals.retrieval.offline import evaluate
        from citewall.retrieval.embedder import load_embedder
        from citewall.retrieval.reranker import load_reranker

        settings = get_settings()
        reranker, status = load_reranker(settings)
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
