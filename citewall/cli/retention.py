"""`citewall retention run`: remove the words of conversations past ``CITEWALL_RETENTION_DAYS``
and trim audit lines past ``CITEWALL_AUDIT_RETENTION_DAYS`` now, as ``citewall serve`` does on
its schedule (under the same lease: it waits for no replica, it says one is running)."""

from __future__ import annotations

import json

import typer

from citewall.api.retention_schedule import run_once
from citewall.cli.errors import EXIT_RUNTIME, cli_errors
from citewall.cli.operator import operator_name
from citewall.config import get_settings
from citewall.storage import leases
from citewall.storage.schema import open_database

app = typer.Typer(
    help="Retention of members' conversations (docs/privacy.md).", no_args_is_help=True
)


@app.command("run")
def run(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Run retention once: what it removed, by column, and the audit lines it trimmed."""
    with cli_errors():
        settings = get_settings()
        db = open_database(settings.sqlalchemy_url)
        try:
            report = run_once(
                db.sessions,
                settings,
                holder=f"cli:{leases.holder_name()}",
                actor=operator_name(),
                via="cli",
            )
        finally:
            db.dispose()
    if report is None:
        typer.echo("another process is running retention now; try again later", err=True)
        raise typer.Exit(EXIT_RUNTIME)
    summary = {
        "retention_days": settings.retention_days,
        "audit_retention_days": settings.audit_retention_days,
        "conversations": report.conversations,
        "batches": report.batches,
        "removed": report.removed,
        "audit_lines_trimmed": report.audit_lines,
    }
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    if settings.retention_days is None:
        typer.echo("CITEWALL_RETENTION_DAYS is not set: conversations are kept")
    else:
        days = settings.retention_days
        typer.echo(
            f"removed the words of {_count(report.conversations, 'conversation')} not updated "
            f"for {_count(days, 'day')}"
        )
        for name, n in report.removed.items():
            typer.echo(f"  {name}: {n}")
    if settings.audit_retention_days is not None:
        typer.echo(f"trimmed {_count(report.audit_lines, 'audit line')}")


def _count(n: int, noun: str) -> str:
    """``1 day``, ``2 days``, ``0 conversations``: the wording an operator reads."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
