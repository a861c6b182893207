"""Registering a source: the one path `citewall sources add` and ``POST /api/v1/admin/sources``
both take. Every option is checked before anything is stored (a site's URL as the crawler reads
it, a folder or a card file on this host, the schedule, the groups), and a refusal names the
option it is about; the source and its ``sources.change`` audit line are one transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from citewall.errors import IngestError, UserError
from citewall.ingest.crawl.site import plan_sites
from citewall.ingest.sync_rules import parse_every
from citewall.storage import kb_sources
from citewall.storage.audit import Actor
from citewall.storage.kb_sources import RegisteredSource

#: The kinds a person registers (the playbooks source is made by the first playbook saved).
AddableKind = Literal["site", "folder", "cards"]
#: The option a refusal is about.
SourceField = Literal["location", "every", "audiences"]


class SourceFieldError(UserError):
    """A source refused at registration; ``field`` names the option (its message says why)."""

    def __init__(self, field: SourceField, message: str) -> None:
        super().__init__(message)
        self.field: SourceField = field


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """A source as asked for: a site's URL, or a folder's or card file's path on this host."""

    kind: AddableKind
    location: str
    license: str | None = None
    #: A schedule as written (30m, 6h, 1d); None: only an explicit sync syncs it.
    every: str | None = None
    audiences: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CheckedSpec:
    """A spec whose every option was accepted, as it is stored."""

    kind: AddableKind
    location: str
    license: str | None
    every_s: int | None
    audiences: tuple[str, ...]


def check_source(spec: SourceSpec) -> CheckedSpec:
    """``spec`` as it is stored, or ``SourceFieldError`` naming the first option refused."""
    location = _location(spec.kind, spec.location)
    try:
        every_s = parse_every(spec.every) if spec.every is not None else None
    except UserError as exc:
        raise SourceFieldError("every", str(exc)) from None
    try:
        groups = tuple(kb_sources.source_audiences(spec.audiences))
    except UserError as exc:
        raise SourceFieldError("audiences", str(exc)) from None
    license = spec.license.strip() if spec.license and spec.license.strip() else None
    return CheckedSpec(spec.kind, location, license, every_s, groups)


def _location(kind: AddableKind, value: str) -> str:
    if kind == "site":
        try:
            plan_sites([value])
        except IngestError as exc:
            raise SourceFieldError("location", str(exc)) from None
        return value.strip()
    if not value.strip():
        raise SourceFieldError("location", f"a {kind} source needs the path of its {_what(kind)}")
    try:
        path = Path(value).expanduser().resolve()
        found = path.is_dir() if kind == "folder" else path.is_file()
    except (OSError, RuntimeError, ValueError):  # a null byte, a name too long, a loop
        found = False
    if not found:
        raise SourceFieldError("location", f"{value[:500]} is not a {_what(kind)} on this host")
    return str(path)


def _what(kind: AddableKind) -> str:
    return "folder" if kind == "folder" else "file"


def register_source(
    spec: SourceSpec,
    session_factory: Callable[[], Any],
    *,
    actor: Actor,
    now: datetime,
) -> RegisteredSource:
    """Check ``spec`` and register it, due for its first sync at once when it has a schedule;
    ``SourceFieldError`` for a refused option, ``ConflictError`` if it is registered already.
    The ``sources.change`` line names ``actor``."""
    checked = check_source(spec)
    event = actor.event(
        "sources.change",
        "source",
        {
            "added": f"{checked.kind} {checked.location}",
            "every_s": checked.every_s,
            "audiences": list(checked.audiences),
        },
    )
    with session_factory() as session:
        return kb_sources.add_source(
            session,
            checked.kind,
            checked.location,
            license=checked.license,
            every_s=checked.every_s,
            audiences=checked.audiences,
            now=now,
            audit_event=event,
        )
