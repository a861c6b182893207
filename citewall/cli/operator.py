"""Who runs a command on the host, as the audit log names them (``cli:<login name>``), and the
audit line of a change to the knowledge base made by ``citewall ingest``."""

from __future__ import annotations

import getpass
from typing import Any

from citewall.config import Settings
from citewall.storage import audit
from citewall.storage.schema import open_database


def operator_name() -> str:
    """``cli:<login name>``, or ``cli`` where there is none (a container without a passwd
    entry)."""
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def operator() -> audit.Actor:
    """The operator of this command, as their audit lines name them."""
    return audit.Actor(name=operator_name(), user_id=None, via="cli")


def record_cards_change(settings: Settings, target: str, detail: dict[str, Any]) -> None:
    """Append a ``cards.change`` line (what an ingest added, updated and deleted)."""
    database = open_database(settings.sqlalchemy_url)
    try:
        with database.sessions() as session:
            audit.append(
                session,
                operator().event("cards.change", target, detail),
            )
    finally:
        database.dispose()
