"""`citewall serve` (filled in by its stage)."""

from __future__ import annotations

import typer


def serve() -> None:
    """Not yet available."""
    typer.echo("citewall serve: not implemented yet", err=True)
    raise typer.Exit(1)
