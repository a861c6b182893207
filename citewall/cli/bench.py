"""`citewall bench` sub-commands."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from citewall.cli.errors import cli_errors

app = typer.Typer(
    help="Benchmarks: retrieval latency per stage and size; API load.", no_args_is_help=True
)


@app.command("retrieval")
def retrieval(
    sizes: str = typer.Option("1000,10000", "--sizes", help="Comma-separated chunk counts."),
    ingest_cards: int = typer.Option(500, "--ingest-cards", help="0 skips the ingest run."),
    out: Path = typer.Option(Path("benchmarks/results"), "--out", help="JSON + Markdown here."),
    demo: Path = typer.Option(Path("kb/demo/cards.jsonl"), "--demo"),
    questions: Path = typer.Option(Path("kb/eval/questions.test.jsonl"), "--questions"),
    minilm_reranker: bool = typer.Option(
        True,
        "--minilm-reranker/--configured-reranker",
        help="Time the full path with a CrossEncoder built from the packaged MiniLM (untrained "
        "head: same architecture and cost as ms-marco-MiniLM-L-6-v2) when none is configured.",
    ),
) -> None:
    """p50/p95 per stage at each size (rrf_only and full), and ingest vs the embedding floor."""
    with cli_errors():
        from citewall.config import get_settings
        from citewall.retrieval.benchmark import run, to_markdown
        from citewall.retrieval.embedder import default_embedding_model_path, load_embedder
        from citewall.retrieval.reranker import (
            CrossEncoderReranker,
            build_cross_encoder,
            load_reranker,
        )

        settings = get_settings()
        reranker, status = load_reranker(settings)
        if reranker is None and minilm_reranker:
            model = build_cross_encoder(
                default_embedding_model_path(),
                max_length=settings.reranker_max_length,
                local_only=True,
            )
            reranker = CrossEncoderReranker(
                model, name="packaged MiniLM, untrained head", bf16=settings.reranker_bf16
            )
            status = reranker.name
        result = run(
            settings,
            sizes=[int(x) for x in sizes.split(",") if x.strip()],
            demo_path=demo,
            questions_path=[questions],
            embedder=load_embedder(settings),
            reranker=reranker,
            reranker_name=status,
            ingest_cards_n=ingest_cards,
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / "retrieval.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    md = to_markdown(result)
    (out / "retrieval.md").write_text(md, encoding="utf-8")
    typer.echo(md)
