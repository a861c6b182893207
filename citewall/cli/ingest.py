"""`citewall ingest PATH... [--prune]`: load, validate and index KB cards incrementally."""

from __future__ import annotations

from pathlib import Path

import typer

from citewall.cli.errors import cli_errors


def ingest(
    paths: list[Path] = typer.Argument(..., help="JSONL files and/or folders of Markdown cards."),
    prune: bool = typer.Option(
        False, "--prune", help="Delete indexed cards that are absent from PATHs."
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
) -> None:
    """Ingest cards. Unchanged cards are skipped; refused cards are listed (exit 1)."""
    with cli_errors():
        # Deferred: the models and indexes take seconds to import; `citewall --help` should not.
        from citewall.config import get_settings
        from citewall.ingest.pipeline import ingest_paths

        report = ingest_paths(paths, get_settings(), prune=prune, progress=progress)
    for err in report.errors:
        typer.echo(f"refused: {err}", err=True)
    typer.echo(report.summary())
    if report.refused:
        raise typer.Exit(1)
