"""`citewall ingest PATH... [--prune]`: load, validate and index KB cards incrementally;
`citewall ingest --site URL... [--license L] [--audience G]... [--prune]`: crawl a help center
into external cards (for the groups ``--audience`` names; none: every member)."""

from __future__ import annotations

from pathlib import Path

import typer

from citewall.cli.errors import cli_errors
from citewall.cli.operator import record_cards_change
from citewall.config import get_settings
from citewall.errors import UserError
from citewall.kb.audiences import audience_names


def _site_entries(sites: list[str], site_file: Path | None) -> list[str]:
    """The --site URLs, then those of --site-file (one a line; blank lines and # comments out)."""
    entries = list(sites)
    if site_file is not None:
        try:
            lines = site_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"{site_file}: cannot read the URL list ({exc})") from None
        entries += [s for line in lines if (s := line.strip()) and not s.startswith("#")]
    return entries


def ingest(
    paths: list[Path] = typer.Argument(
        None,
        help="JSONL files, Markdown cards, and folders of them or of documents (PDF, DOCX, "
        "HTML, Markdown without front matter: internal cards); or --site.",
    ),
    sites: list[str] = typer.Option(
        [],
        "--site",
        help="A help center's sitemap (or sitemap index) URL, or a single page URL; repeatable.",
    ),
    site_file: Path | None = typer.Option(
        None, "--site-file", help="A file of --site URLs, one a line (# comments)."
    ),
    license: str | None = typer.Option(
        None, "--license", help="Licence of the crawled pages (e.g. CC-BY-4.0), shown with them."
    ),
    audience: list[str] = typer.Option(
        [],
        "--audience",
        help="With --site: a group the crawled pages are for (repeatable); none: every member.",
    ),
    prune: bool = typer.Option(
        False,
        "--prune",
        help="Delete indexed cards that are absent from PATHs; with --site, only that site's "
        "pages that are no longer listed.",
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
) -> None:
    """Ingest cards. Unchanged cards are skipped; refused cards are listed (exit 1)."""
    with cli_errors():
        entries = _site_entries(sites, site_file)
        if entries and paths:
            raise UserError("give PATHs or --site, not both (run citewall ingest twice)")
        if not entries and not paths:
            raise UserError("nothing to ingest: give PATHs or --site URL")
        try:
            audience = list(audience_names(audience))
        except ValueError as exc:
            raise UserError(f"--audience: {exc}") from None
        if entries:
            _ingest_sites(entries, license, audience, prune, progress)
            return
        if license is not None:
            raise UserError("--license applies to --site (cards in files carry their own)")
        if audience:
            raise UserError(
                "--audience applies to --site (cards in files carry their own audiences, or "
                "their folder's _audiences.yaml)"
            )
        # Deferred: the models and indexes take seconds to import; `citewall --help` should not.
        from citewall.ingest.pipeline import ingest_paths

        report = ingest_paths(paths, get_settings(), prune=prune, progress=progress)
        if report.added or report.updated or report.deleted:
            record_cards_change(
                get_settings(),
                f"paths:{', '.join(str(p) for p in paths)}",
                {"added": report.added, "updated": report.updated, "deleted": report.deleted},
            )
    for err in report.errors:
        typer.echo(f"refused: {err}", err=True)
    typer.echo(report.summary())
    if report.refused:
        raise typer.Exit(1)


def _ingest_sites(
    entries: list[str], license: str | None, audience: list[str], prune: bool, progress: bool
) -> None:
    """Crawl and ingest; refusals (URL: reason) and notes on stderr, the summary on stdout."""
    # Deferred: the models, indexes and trafilatura take seconds to import.
    from citewall.ingest.crawl.run import ingest_sites

    report = ingest_sites(
        entries,
        get_settings(),
        license=license,
        audiences=audience,
        prune=prune,
        progress=progress,
    )
    changed = report.ingest
    if changed.added or changed.updated or changed.deleted:
        record_cards_change(
            get_settings(),
            f"sites:{', '.join(entries)}",
            {"added": changed.added, "updated": changed.updated, "deleted": changed.deleted},
        )
    for refusal in report.refused:
        typer.echo(f"refused: {refusal.url}: {refusal.reason}", err=True)
    for url, kept in report.duplicates:
        typer.echo(f"duplicate: {url}: same page as {kept}", err=True)
    for note in report.notes:
        typer.echo(f"note: {note}", err=True)
    typer.echo(report.summary())
    if report.refused:
        raise typer.Exit(1)
