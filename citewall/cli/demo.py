"""`citewall demo` (filled in by its stage)."""

from __future__ import annotations

import typer


def demo() -> None:
    """Not yet available."""
    typer.echo("citewall demo: not implemented yet", err=True)
    raise typer.Exit(1)
