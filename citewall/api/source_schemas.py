"""Wire schemas of the registered KB sources and their syncs, for the admin pages."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citewall.storage.kb_sources import RegisteredSource, SyncRun
from citewall.storage.models import SourceKind

_STRICT = ConfigDict(extra="forbid")


class SyncRefusal(BaseModel):
    model_config = _STRICT

    #: A URL, or file:line.
    where: str
    reason: str


class SyncRunPublic(BaseModel):
    """One sync: applied, held (the source shrank by half or more: an admin confirms it with
    ``citewall sync ID --confirm``) or failed (the source could not be read)."""

    model_config = _STRICT

    id: int
    status: Literal["applied", "held", "failed"]
    started_at: datetime
    duration_s: float
    added: int
    updated: int
    unchanged: int
    removed: int
    refused: int
    refusals: list[SyncRefusal]
    note: str
    #: Pages kept though the last ``sync_stale_after`` syncs could not read them.
    stale: list[str]


class RegisteredSourcePublic(BaseModel):
    """A registered source with its schedule, card count and last sync."""

    model_config = _STRICT

    id: int
    kind: SourceKind
    location: str
    license: str | None
    every_s: int | None
    #: The groups the source's cards are for, applied at every sync; empty: every member.
    audiences: list[str]
    cards: int
    last_sync_at: datetime | None
    next_sync_at: datetime | None
    last_run: SyncRunPublic | None


class SourceCreate(BaseModel):
    """A source to register, as `citewall sources add site|folder|cards` takes it: a site by
    its ``url`` (a sitemap or one page), a folder or a card file by its ``server_path`` (a path
    on the server's host)."""

    model_config = _STRICT

    kind: Literal["site", "folder", "cards"]
    url: str | None = Field(default=None, max_length=2000)
    server_path: str | None = Field(default=None, max_length=2000)
    #: A site's pages' licence.
    license: str | None = Field(default=None, max_length=200)
    #: Its schedule (30m, 6h, 1d, 1d12h; 5 minutes at least); none: synced only when asked.
    every: str | None = Field(default=None, max_length=32)
    #: The groups its cards are for; empty: every member.
    audiences: list[str] = Field(default_factory=list, max_length=100)


class SourceRemoved(BaseModel):
    """A source unregistered, and how many of its cards left the KB with it."""

    model_config = _STRICT

    source: RegisteredSourcePublic
    deleted: int


def sync_run_public(run: SyncRun) -> SyncRunPublic:
    assert run.id is not None  # a stored run
    return SyncRunPublic(
        id=run.id,
        status=run.status,
        started_at=run.started_at,
        duration_s=round(run.duration_s, 3),
        added=run.added,
        updated=run.updated,
        unchanged=run.unchanged,
        removed=run.removed,
        refused=run.refused,
        refusals=[SyncRefusal(where=r.where, reason=r.reason) for r in run.refusals],
        note=run.note,
        stale=list(run.stale),
    )


def registered_source_public(
    source: RegisteredSource, last_run: SyncRun | None
) -> RegisteredSourcePublic:
    return RegisteredSourcePublic(
        id=source.id,
        kind=source.kind,
        location=source.location,
        license=source.license,
        every_s=source.every_s,
        audiences=list(source.audiences),
        cards=len(source.card_ids),
        last_sync_at=source.last_sync_at,
        next_sync_at=source.next_sync_at,
        last_run=sync_run_public(last_run) if last_run is not None else None,
    )
