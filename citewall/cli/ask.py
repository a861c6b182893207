"""`citewall ask` (filled in by its stage)."""

from __future__ import annotations

import typer


def ask() -> None:
    """Not yet available."""
    typer.echo("citewall ask: not implemented yet", err=True)
    raise typer.Exit(1)
