"""`citewall ingest` (filled in by its stage)."""

from __future__ import annotations

import typer


def ingest() -> None:
    """Not yet available."""
    typer.echo("citewall ingest: not implemented yet", err=True)
    raise typer.Exit(1)
