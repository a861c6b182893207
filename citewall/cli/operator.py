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


def record_cards_change(settings: Settings, target: str, detail: dict[str, Any]) -> None:
    """Append a ``cards.change`` line (what an ingest added, updated and deleted)."""
    database = open_database(settings.sqlalchemy_url)
    try:
        with database.sessions() as session:
            audit.append(
                session,
                audit.AuditEvent(
                    actor=operator_name(),
                    actor_user_id=None,
                    via="cli",
                    action="cards.change",
                    target=target,
                    detail=detail,
                ),
            )
    finally:
        database.dispose()
