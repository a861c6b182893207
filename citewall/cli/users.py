"""`citewall users`: add users, list them, set a member's groups, issue and revoke bearer
tokens.

``add`` and ``token`` print the new token alone on the LAST line of output, so scripts can do
``TOKEN=$(citewall users add alice --role admin | tail -n 1)``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from citewall.api.privacy_schemas import ErasureReceipt
from citewall.chat.smalltalk import SMALL_TALK_REPLIES
from citewall.cli.errors import cli_errors
from citewall.cli.operator import operator
from citewall.config import get_settings
from citewall.errors import UserError
from citewall.storage.erasure import carry_out, find_user, request_erasure
from citewall.storage.models import ROLES, ApiToken, User
from citewall.storage.schema import Database, open_database
from citewall.storage.types import utcnow
from citewall.storage.users import (
    add_token,
    check_groups,
    check_role,
    create_user,
    get_user,
    list_users,
    revoke_token,
    revoke_user,
    set_groups,
    token_active,
)

app = typer.Typer(help="Manage users and their bearer tokens.", no_args_is_help=True)


def open_settings_database() -> Database:
    """The configured database (``CITEWALL_DATABASE_URL`` or the SQLite file), migrated."""
    return open_database(get_settings().sqlalchemy_url)


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%SZ") if value is not None else ""


def _active(user: User, now: datetime) -> tuple[list[ApiToken], list[ApiToken]]:
    """The user's active API tokens and active sessions (ended and revoked ones left out)."""
    active = [t for t in user.tokens if token_active(t, now)]
    return [t for t in active if t.expires_at is None], [t for t in active if t.expires_at]


def _user_json(user: User, now: datetime) -> dict[str, object]:
    tokens, sessions = _active(user, now)
    used = [t.last_used_at for t in user.tokens if t.last_used_at is not None]
    return {
        "id": user.id,
        "name": user.name,
        "role": user.role,
        "created_at": user.created_at.isoformat(),
        "disabled_at": user.disabled_at.isoformat() if user.disabled_at else None,
        "issuer": user.issuer,
        "email": user.email,
        "groups": list(user.groups or []),
        "active_tokens": [t.prefix for t in tokens],
        "active_sessions": len(sessions),
        "last_used_at": max(used).isoformat() if used else None,
    }


@app.command("add")
def add(
    name: str = typer.Argument(..., help="User name (letters, digits, . _ @ -)."),
    role: str = typer.Option("member", "--role", "-r", help=f"One of: {', '.join(ROLES)}."),
    group: list[str] = typer.Option(
        [],
        "--group",
        "-g",
        help="A group the member belongs to (repeatable): the audiences whose cards they see.",
    ),
) -> None:
    """Create a user and print its bearer token (alone on the last line; shown only once)."""
    with cli_errors():
        check_role(role)  # a usage error even when the database is down
        check_groups(group)
        db = open_settings_database()
        try:
            with db.sessions() as session:
                user, token = create_user(session, name, role, group)
        finally:
            db.dispose()
    groups = f", groups {', '.join(user.groups)}" if user.groups else ""
    typer.echo(f"created {user.role} {user.name!r} (id {user.id}{groups})")
    typer.echo("bearer token (shown once, store it now):")
    typer.echo(token)


@app.command("list")
def list_(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List users, their roles, active API token prefixes, live sessions and last use."""
    with cli_errors():
        db = open_settings_database()
        try:
            with db.sessions() as session:
                users = list_users(session)
        finally:
            db.dispose()
    now = utcnow()
    if as_json:
        typer.echo(json.dumps([_user_json(u, now) for u in users], indent=2))
        return
    table = Table(title=f"{len(users)} user(s)")
    columns = ("name", "role", "created", "disabled", "active tokens", "sessions", "last used")
    for column in columns:
        table.add_column(column, no_wrap=column == "name")
    for user in users:
        tokens, sessions = _active(user, now)
        used = [t.last_used_at for t in user.tokens if t.last_used_at is not None]
        table.add_row(
            escape(user.name),
            user.role,
            _when(user.created_at),
            _when(user.disabled_at),
            ", ".join(f"{t.prefix}…" for t in tokens),
            str(len(sessions)),
            _when(max(used) if used else None),
        )
    Console().print(table)


@app.command("groups")
def groups(
    name: str = typer.Argument(..., help="The user whose groups to show or set."),
    group: list[str] = typer.Argument(
        None, help="Every group the member belongs to (none given: show them)."
    ),
    none: bool = typer.Option(False, "--none", help="Take the user out of every group."),
) -> None:
    """Show a user's groups, or replace them (for token users; a host-signed member's groups
    come from the host token at every sign-in)."""
    with cli_errors():
        if none and group:
            raise UserError("give the groups or --none, not both")
        check_groups(group or [])
        db = open_settings_database()
        try:
            with db.sessions() as session:
                if not group and not none:
                    user = get_user(session, name)
                    typer.echo(f"{user.name!r} is in {_groups_of(user.groups)}")
                    return
                user = set_groups(session, name, group or [])
        finally:
            db.dispose()
    typer.echo(f"{user.name!r} is now in {_groups_of(user.groups)}")


def _groups_of(groups: Sequence[str]) -> str:
    return ", ".join(groups) if groups else "no group"


@app.command("revoke")
def revoke(name: str = typer.Argument(..., help="The user to disable.")) -> None:
    """Disable a user and revoke all of their tokens (their history is kept)."""
    with cli_errors():
        db = open_settings_database()
        try:
            with db.sessions() as session:
                user = revoke_user(session, name)
        finally:
            db.dispose()
    typer.echo(f"disabled {user.name!r} and revoked all of their tokens")


@app.command("token")
def token(name: str = typer.Argument(..., help="An existing, active user.")) -> None:
    """Issue another token for a user and print it (alone on the last line)."""
    with cli_errors():
        db = open_settings_database()
        try:
            with db.sessions() as session:
                user = get_user(session, name)
                new = add_token(session, user)
        finally:
            db.dispose()
    typer.echo(f"new token for {user.name!r} (shown once, store it now):")
    typer.echo(new)


@app.command("revoke-token")
def revoke_token_(
    prefix: str = typer.Argument(..., help="The token's first 8 characters."),
) -> None:
    """Revoke one token by its display prefix (as shown by `citewall users list`)."""
    with cli_errors():
        db = open_settings_database()
        try:
            with db.sessions() as session:
                revoked = revoke_token(session, prefix)
        finally:
            db.dispose()
    typer.echo(f"revoked token {revoked.prefix}…")


@app.command("erase")
def erase(
    who: str = typer.Argument(..., help="The user's name or id."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Erase a user's personal data on their request (docs/privacy.md): name, email, tokens,
    sessions and their conversations' words; the analytics keep their rows unnamed. Prints
    the receipt as JSON."""
    with cli_errors():
        db = open_settings_database()
        try:
            with db.sessions() as session:
                user = find_user(session, who)
                user_id, name = user.id, user.name
                session.commit()
            if not yes:
                typer.confirm(
                    f"erase {name!r} (id {user_id}): their name, email, tokens, sessions and "
                    "conversations' words? This cannot be undone",
                    abort=True,
                )
            actor = operator()
            with db.sessions() as session:
                request = request_erasure(
                    session,
                    user_id,
                    requested_by=actor.name,
                    now=utcnow(),
                    audit=actor.event("erasure", f"user:{user_id}"),
                )
            done = carry_out(
                db.sessions, request.id, clock=utcnow, canned_replies=SMALL_TALK_REPLIES
            )
        finally:
            db.dispose()
    typer.echo(f"erased user id {user_id}; receipt:")
    # The admin API's receipt, field for field (GET /api/v1/admin/erasures lists it too).
    typer.echo(ErasureReceipt.of(done).model_dump_json(indent=2))
