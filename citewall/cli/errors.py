"""Turn citewall errors into a clear message and an exit code (no traceback for user errors)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import typer

from citewall.errors import CitewallError, UserError

#: Exit codes: 1 = runtime failure, 2 = the caller's mistake (bad input or configuration).
EXIT_RUNTIME = 1
EXIT_USAGE = 2


@contextmanager
def cli_errors() -> Iterator[None]:
    """Print ``error: <message>`` to stderr and exit non-zero on a citewall error."""
    try:
        yield
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_USAGE) from None
    except CitewallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_RUNTIME) from None
