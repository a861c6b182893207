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
from urllib.parse import urlsplit

from citewall.config import Settings
from citewall.errors import IngestError, UserError
from citewall.ingest.crawl.addresses import address_problem
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
class CrawlAddresses:
    """Which addresses the crawler may reach (``CITEWALL_CRAWL_ALLOW_PRIVATE`` and
    ``CITEWALL_CRAWL_ALLOW_LINK_LOCAL``): a site whose URL names one it may not is refused at
    registration, not at its first sync."""

    allow_private: bool
    allow_link_local: bool

    @classmethod
    def of(cls, settings: Settings) -> CrawlAddresses:
        return cls(settings.crawl_allow_private, settings.crawl_allow_link_local)


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


def check_source(spec: SourceSpec, addresses: CrawlAddresses) -> CheckedSpec:
    """``spec`` as it is stored, or ``SourceFieldError`` naming the first option refused."""
    location = _location(spec.kind, spec.location)
    if spec.kind == "site":
        _check_address(location, addresses)
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


def _check_address(url: str, addresses: CrawlAddresses) -> None:
    """Refuse a site whose host is an address literal (or ``localhost``) the crawler may not
    reach. A host name is resolved only when it is crawled, and checked there again (a DNS
    answer can change); this catches the case a person types, at the moment they type it.

    >>> _check_address("https://help.example.com/sitemap.xml", CrawlAddresses(False, False))
    >>> _check_address("http://127.0.0.1:8766/sitemap.xml", CrawlAddresses(True, False))
    """
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    literal = "127.0.0.1" if host == "localhost" or host.endswith(".localhost") else host
    problem = address_problem(
        literal, allow_private=addresses.allow_private, allow_link_local=addresses.allow_link_local
    )
    if problem is None or problem.reason.startswith("not an IP address"):
        return
    allowed = f" ({problem.allowed_by}, a setting of the server)" if problem.allowed_by else ""
    raise SourceFieldError(
        "location",
        f"{url[:500]}: {host} is a {problem.reason}: the crawler does not reach it{allowed}",
    )


def _what(kind: AddableKind) -> str:
    return "folder" if kind == "folder" else "file"


def register_source(
    spec: SourceSpec,
    session_factory: Callable[[], Any],
    *,
    addresses: CrawlAddresses,
    actor: Actor,
    now: datetime,
) -> RegisteredSource:
    """Check ``spec`` and register it, due for its first sync at once when it has a schedule;
    ``SourceFieldError`` for a refused option, ``ConflictError`` if it is registered already.
    The ``sources.change`` line names ``actor``."""
    checked = check_source(spec, addresses)
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
