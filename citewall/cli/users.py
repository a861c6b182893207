"""`citewall users` sub-commands (filled in by their stages)."""

from __future__ import annotations

import typer

app = typer.Typer(help="users", no_args_is_help=True)
