"""`citewall sources`: register the KB's sources (a site, a document folder, a card file), each
for every member or for the groups ``--audience`` names, list them with their last sync, change
a source's audiences, remove one with its cards; `citewall sync [ID...]` syncs now."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from citewall.cli.errors import EXIT_RUNTIME, cli_errors
from citewall.cli.operator import operator
from citewall.config import get_settings
from citewall.ingest.registration import (
    AddableKind,
    CrawlAddresses,
    SourceSpec,
    check_source,
    register_source,
)
from citewall.ingest.sync import SYNC_LEASE_S, SyncRunningError, remove_source, sync_source
from citewall.storage import kb_sources
from citewall.storage.kb_sources import RegisteredSource, SyncRun
from citewall.storage.schema import open_database
from citewall.storage.types import utcnow

app = typer.Typer(help="Register the sources the KB is synced from.", no_args_is_help=True)
add_app = typer.Typer(help="Register a source.", no_args_is_help=True)
app.add_typer(add_app, name="add")

EVERY_HELP = "Sync on this schedule (30m, 6h, 1d); without it, only `citewall sync` syncs it."
AUDIENCE_HELP = (
    "A group the source's cards are for (repeatable); none: every member. Applied at every "
    "sync, as `citewall ingest --site URL --audience G` applies it."
)
FILES_AUDIENCE_HELP = (
    "A group the source's cards are for (repeatable), on each card that names no audiences of "
    "its own (in its file, sidecar or a folder's _audiences.yaml); none: every member."
)


def _audience_option(text: str) -> Any:
    """The repeatable ``--audience`` option (a typer default, read as ``list[str]``)."""
    return typer.Option([], "--audience", "-a", help=text)


def _groups(audiences: tuple[str, ...]) -> str:
    return ", ".join(audiences) if audiences else "every member"


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%SZ") if value is not None else ""


def _register(
    kind: AddableKind,
    location: str,
    license: str | None,
    every: str | None,
    audiences: list[str],
) -> RegisteredSource:
    spec = SourceSpec(kind, location, license, every, tuple(audiences))
    settings = get_settings()
    addresses = CrawlAddresses.of(settings)
    check_source(spec, addresses)  # a bad option is refused before the database is opened
    db = open_database(settings.sqlalchemy_url)
    try:
        return register_source(
            spec, db.sessions, addresses=addresses, actor=operator(), now=utcnow()
        )
    finally:
        db.engine.dispose()


def _added(source: RegisteredSource) -> None:
    schedule = f", synced every {source.every_s} s" if source.every_s else ""
    print(f"source {source.id}: {source.kind} {source.location}{schedule}")
    print(f"its cards are for: {_groups(source.audiences)}")
    print(f"`citewall sync {source.id}` syncs it now")


@add_app.command("site")
def add_site(
    url: str = typer.Argument(..., help="A sitemap, or a single page."),
    license: str | None = typer.Option(None, "--license", help="The pages' licence."),
    every: str | None = typer.Option(None, "--every", help=EVERY_HELP),
    audience: list[str] = _audience_option(AUDIENCE_HELP),
) -> None:
    """Register a help center to crawl (its pages become external cards)."""
    with cli_errors():
        _added(_register("site", url, license, every, audience))


@add_app.command("folder")
def add_folder(
    path: str = typer.Argument(..., help="A folder of cards, Markdown and documents."),
    every: str | None = typer.Option(None, "--every", help=EVERY_HELP),
    audience: list[str] = _audience_option(FILES_AUDIENCE_HELP),
) -> None:
    """Register a document folder."""
    with cli_errors():
        _added(_register("folder", path, None, every, audience))


@add_app.command("cards")
def add_cards(
    file: str = typer.Argument(..., help="A JSONL card file."),
    every: str | None = typer.Option(None, "--every", help=EVERY_HELP),
    audience: list[str] = _audience_option(FILES_AUDIENCE_HELP),
) -> None:
    """Register a card file."""
    with cli_errors():
        _added(_register("cards", file, None, every, audience))


@app.command("audiences")
def audiences_command(
    source_id: int = typer.Argument(..., help="The source's id (`sources list`)."),
    audience: list[str] = typer.Argument(
        None, help="Every group the source's cards are for (none: every member)."
    ),
) -> None:
    """Replace the groups a source's cards are for; its next sync re-labels its cards."""
    with cli_errors():
        groups = kb_sources.source_audiences(audience or [])
        db = open_database(get_settings().sqlalchemy_url)
        try:
            with db.sessions() as session:
                event = operator().event(
                    "sources.change", f"source:{source_id}", {"audiences": groups}
                )
                source = kb_sources.set_audiences(session, source_id, groups, event)
        finally:
            db.engine.dispose()
    print(f"source {source.id}'s cards are for: {_groups(source.audiences)}")
    print(f"`citewall sync {source.id}` re-labels them now")


@app.command("list")
def list_command() -> None:
    """Every source: its schedule, cards, and its last sync's counts."""
    with cli_errors():
        db = open_database(get_settings().sqlalchemy_url)
        try:
            with db.sessions() as session:
                sources = kb_sources.list_sources(session)
                runs = kb_sources.last_runs(session)
        finally:
            db.engine.dispose()
    if not sources:
        print("no sources: `citewall sources add site|folder|cards ...` registers one")
        return
    table = Table(
        "id", "kind", "location", "audiences", "cards", "last sync", "next sync", "last run"
    )
    for source in sources:
        run = runs.get(source.id)
        table.add_row(
            str(source.id),
            source.kind,
            escape(source.location),
            escape(_groups(source.audiences)),
            str(len(source.card_ids)),
            _when(source.last_sync_at),
            _when(source.next_sync_at),
            escape(run_line(run)) if run else "never synced",
        )
    Console(width=200).print(table)


@app.command("remove")
def remove(source_id: int = typer.Argument(..., help="The source's id (`sources list`).")) -> None:
    """Unregister a source and delete its cards from the KB."""
    with cli_errors():
        settings = get_settings()
        db = open_database(settings.sqlalchemy_url)
        try:
            source, deleted = remove_source(
                source_id, settings, session_factory=db.sessions, actor=operator()
            )
        finally:
            db.engine.dispose()
    print(f"removed source {source.id} ({source.kind} {source.location}) and {deleted} cards")


def run_line(run: SyncRun) -> str:
    counts = (
        f"added {run.added}, updated {run.updated}, unchanged {run.unchanged}, "
        f"removed {run.removed}, refused {run.refused}"
    )
    line = f"{run.status} {_when(run.started_at)}: {counts} ({run.duration_s:.1f} s)"
    if run.stale:
        line += f"; {len(run.stale)} stale"
    return f"{line}; {run.note}" if run.note else line


def sync(
    source_ids: list[int] = typer.Argument(None, help="Sources to sync; default: all."),
    due: bool = typer.Option(
        False,
        "--due",
        help="Only the sources whose schedule is due, each claimed so that of several "
        "replicas running this at once exactly one syncs it (for cron or a systemd timer).",
    ),
    confirm: bool = typer.Option(
        False, "--confirm", help="Apply a sync held because the source shrank by half or more."
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress"),
) -> None:
    """Make the KB match its sources now: add and update what changed, remove what is gone.

    Exits 1 when a sync failed, was held for confirmation, or was already running elsewhere.
    """
    with cli_errors():
        settings = get_settings()
        db = open_database(settings.sqlalchemy_url)
        try:
            with db.sessions() as session:
                if source_ids:
                    chosen = [kb_sources.get_source(session, i) for i in source_ids]
                elif due:
                    chosen = kb_sources.claim_due(session, utcnow(), SYNC_LEASE_S)
                else:
                    chosen = kb_sources.list_sources(session)
            runs: list[tuple[RegisteredSource, SyncRun | None]] = []
            for source in chosen:
                try:
                    run = sync_source(
                        source.id,
                        settings,
                        session_factory=db.sessions,
                        confirm=confirm,
                        progress=progress,
                        actor=operator(),
                    )
                except SyncRunningError as exc:  # another process is syncing it: not twice
                    run = None
                    print(f"source {source.id}: {exc}")
                runs.append((source, run))
        finally:
            db.engine.dispose()
    if not runs:
        print("nothing to sync")
    for source, run in runs:
        if run is None:
            continue
        print(f"source {source.id} ({source.kind} {source.location}): {run_line(run)}")
        for refused in run.refusals:
            print(f"  refused {refused.where}: {refused.reason}")
        for url in run.stale:
            print(f"  stale (unreadable {settings.sync_stale_after} syncs in a row): {url}")
    if any(run is None or run.status != "applied" for _, run in runs):
        raise typer.Exit(EXIT_RUNTIME)
