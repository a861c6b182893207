"""`citewall analytics`: the entry-performance rollup and the retrieval-event log.

Both read the configured database (``CITEWALL_DATABASE_URL`` or the SQLite file in the data
dir) and print a table, or JSON with ``--json``. Times are UTC.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, date, datetime, time
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from sqlalchemy.orm import Session

from citewall.cli.errors import cli_errors
from citewall.config import get_settings
from citewall.errors import UserError
from citewall.kb.audiences import audience_problem
from citewall.storage.analytics import NO_PATH, entry_performance, retrieval_events
from citewall.storage.dialect import PERIODS
from citewall.storage.schema import open_database

app = typer.Typer(help="Entry performance and the retrieval-event log.", no_args_is_help=True)

_SINCE_HELP = "Only from this UTC date/time on (YYYY-MM-DD or ISO 8601)."
_UNTIL_HELP = "Only before this UTC date/time (YYYY-MM-DD or ISO 8601)."


def _query(run: Callable[[Session], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Open the configured database (migrated), run one read, and close it again."""
    db = open_database(get_settings().sqlalchemy_url)
    try:
        with db.sessions() as session:
            return run(session)
    finally:
        db.dispose()


def parse_when(value: str | None, option: str) -> datetime | None:
    """``YYYY-MM-DD`` (midnight UTC) or an ISO 8601 time (UTC when no zone is given).

    >>> parse_when("2026-03-01", "--since").isoformat()
    '2026-03-01T00:00:00+00:00'
    """
    if value is None:
        return None
    try:
        if len(value) == 10:
            return datetime.combine(date.fromisoformat(value), time(), tzinfo=UTC)
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise UserError(
            f"{option}: {value!r} is not a date (YYYY-MM-DD) or ISO 8601 time"
        ) from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed


def _num(value: Any, digits: int = 4) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return str(value)


@app.command("performance")
def performance(
    period: str = typer.Option("all", "--period", "-p", help="day, week, month or all."),
    since: str | None = typer.Option(None, "--since", help=_SINCE_HELP),
    until: str | None = typer.Option(None, "--until", help=_UNTIL_HELP),
    card: str | None = typer.Option(None, "--card", help="Only this card id."),
    audience: str | None = typer.Option(
        None, "--audience", help="Only the conversations of members in this group."
    ),
    limit: int = typer.Option(1000, "--limit", help="At most this many rows."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """How often each card was retrieved and cited (internal cards included), and whom each
    card is for; with ``--audience``, for the members of that group only."""
    with cli_errors():
        if period not in PERIODS:
            raise UserError(f"unknown period {period!r}; allowed: {', '.join(PERIODS)}")
        if audience is not None and (problem := audience_problem(audience)):
            raise UserError(f"--audience: {problem}")
        window = (parse_when(since, "--since"), parse_when(until, "--until"))
        rows = _query(
            lambda session: entry_performance(
                session,
                period=period,
                since=window[0],
                until=window[1],
                card_id=card,
                audience=audience,
                limit=limit,
            )
        )
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    members = f", members of {audience}" if audience else ""
    table = Table(title=f"entry performance ({period}{members})")
    columns = ["card", "period", "retrieved", "cited", "cite rate", "mean rank", "last cited"]
    for column in [*columns, "external", "audiences"]:
        table.add_column(
            column,
            justify="right" if column in columns[2:6] else "left",
            no_wrap=column == "card",  # ids are what people grep for
        )
    for row in rows:
        table.add_row(
            escape(row["card_id"]),
            row["period_start"] or "all",
            str(row["times_retrieved"]),
            str(row["times_cited"]),
            _num(row["cite_rate"]),
            _num(row["mean_rank"]),
            (row["last_cited"] or "")[:19],
            "yes" if row["is_external"] else "no",
            escape(", ".join(row["audiences"]) or "every member"),
        )
    Console().print(table)


@app.command("events")
def events(
    card: str | None = typer.Option(None, "--card", help="Only this card id."),
    path: str | None = typer.Option(
        None, "--path", help=f"Only this hybrid path: full, rrf_only, dense_only or {NO_PATH}."
    ),
    cited: bool | None = typer.Option(
        None, "--cited/--not-cited", help="Only cited (or only uncited) retrievals."
    ),
    since: str | None = typer.Option(None, "--since", help=_SINCE_HELP),
    until: str | None = typer.Option(None, "--until", help=_UNTIL_HELP),
    limit: int = typer.Option(100, "--limit", help="At most this many events."),
    offset: int = typer.Option(0, "--offset", help="Skip this many (newest first)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The retrieval-event log, newest first: each retrieved card's ranks and scores by stage."""
    with cli_errors():
        window = (parse_when(since, "--since"), parse_when(until, "--until"))
        rows = _query(
            lambda session: retrieval_events(
                session,
                card_id=card,
                hybrid_path=path,
                since=window[0],
                until=window[1],
                cited=cited,
                limit=limit,
                offset=offset,
            )
        )
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(title=f"{len(rows)} retrieval event(s)")
    for column in ("time", "card", "rank", "path", "dense", "bm25", "rrf", "rerank", "cited"):
        table.add_column(column, no_wrap=column in {"card", "path"})
    for row in rows:
        table.add_row(
            row["created_at"][:19],
            escape(row["card_id"]),
            str(row["final_rank"]),
            row["hybrid_path"] or "",
            _num(row["dense_score"]),
            _num(row["bm25_score"]),
            _num(row["rrf_score"]),
            _num(row["rerank_logit"]),
            "yes" if row["cited"] else "no",
        )
    Console().print(table)
