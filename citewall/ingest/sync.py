"""``citewall sync``: make the KB match each registered source.

A site is crawled with pruning: a page that left the sitemap, answers 404 or 410, or that
robots.txt now forbids is removed from every index and the catalogue; a page that could not be
read for a transient reason (a timeout, a 5xx, robots.txt unreachable) is kept, and after
``sync_stale_after`` syncs in a row it is listed as stale. A folder or a card file is loaded
and pruned to the cards its previous sync left; the playbooks source (the cards written in
the admin pages, ``ingest.playbooks``) serves the newest version of each playbook. A source
that comes back empty, or with fewer than half of its cards, is held: nothing is written until
an admin confirms (``sync_rules.held_reason``). Every sync is recorded as a run, applied, held or
failed. A sync or removal holds the source's lease (``leases``) while it runs: of the schedule,
`citewall sync` and the admin API, on any replica, one at a time works on a source.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from citewall.config import Settings
from citewall.errors import CitewallError, ConflictError
from citewall.ingest.crawl.canonical import Site
from citewall.ingest.crawl.previous import PreviousCrawl, read_previous
from citewall.ingest.crawl.run import ingest_sites
from citewall.ingest.crawl.site import CrawlResult, plan_sites
from citewall.ingest.loaders import load_cards
from citewall.ingest.pipeline import IngestReport, ingest_cards
from citewall.ingest.playbooks import playbook_cards
from citewall.ingest.sync_rules import failing_after, held_reason, stale_pages
from citewall.kb.card import Card
from citewall.retrieval.embedder import load_embedder
from citewall.retrieval.protocols import Embedder
from citewall.storage import kb_sources, leases
from citewall.storage.audit import Actor
from citewall.storage.kb_sources import Refused, RegisteredSource, SourceState, SyncRun
from citewall.storage.types import utcnow

SessionFactory = Callable[[], Any]
#: How long a claimed scheduled sync may run before another replica may claim the source again,
#: and how long a sync's lease on its source lasts (a crashed sync blocks no longer).
SYNC_LEASE_S = 3600
#: Who syncs when no one asked: the schedule `citewall serve` keeps.
SCHEDULE = Actor(name="sync", user_id=None, via="system")


class SyncRunningError(ConflictError):
    """A sync or removal of the source is under way (in this process or another)."""


def source_lease_name(source_id: int) -> str:
    """The ``leases`` row a sync or removal of the source holds while it runs."""
    return f"source-sync:{source_id}"


@contextmanager
def source_lease(session_factory: SessionFactory, source_id: int) -> Iterator[None]:
    """Hold the source's lease while the block runs, or ``SyncRunningError`` when another sync
    or removal of it holds it: one at a time per source across every process and replica. The
    lease ends after ``SYNC_LEASE_S`` if its holder dies."""
    name, holder = source_lease_name(source_id), leases.holder_name()
    ttl = timedelta(seconds=SYNC_LEASE_S)
    with session_factory() as session:
        if not leases.acquire(session, name, holder, now=utcnow(), ttl=ttl):
            raise SyncRunningError(f"a sync of source {source_id} is already running")
    try:
        yield
    finally:
        with session_factory() as session:
            leases.release(session, name, holder)


def sync_source(
    source_id: int,
    settings: Settings,
    *,
    session_factory: SessionFactory,
    embedder: Embedder | None = None,
    confirm: bool = False,
    progress: bool = False,
    actor: Actor = SCHEDULE,
) -> SyncRun:
    """Sync one registered source and record the run. ``confirm`` applies a sync that the
    shrink rule would hold. A source that cannot be read is a ``failed`` run, not an error;
    one that another process is syncing is ``SyncRunningError`` (nothing is run twice).

    A run that changed the cards is a ``cards.change`` line of the audit log, written with it
    (``actor`` names who asked: the schedule, a command on the host, an admin's request)."""
    with session_factory() as session:
        kb_sources.get_source(session, source_id)  # NotFoundError before the lease
    with source_lease(session_factory, source_id):
        return _sync_leased(
            source_id, settings, session_factory, embedder, confirm, progress, actor
        )


def _sync_leased(
    source_id: int,
    settings: Settings,
    session_factory: SessionFactory,
    embedder: Embedder | None,
    confirm: bool,
    progress: bool,
    actor: Actor,
) -> SyncRun:
    with session_factory() as session:
        source = kb_sources.get_source(session, source_id)  # as it is now the lease is held
    started, t0 = utcnow(), time.perf_counter()
    try:
        if source.kind == "site":
            run, state = _sync_site(source, settings, session_factory, embedder, confirm, progress)
        elif source.kind == "playbooks":
            run, state = _sync_playbooks(source, settings, session_factory, embedder)
        else:
            run, state = _sync_files(source, settings, session_factory, embedder, confirm, progress)
    except CitewallError as exc:
        run, state = SyncRun(status="failed", started_at=started, note=str(exc)), None
    timed = dataclasses.replace(run, started_at=started, duration_s=time.perf_counter() - t0)
    event = None
    if timed.added or timed.updated or timed.removed:
        counts = {"added": timed.added, "updated": timed.updated, "deleted": timed.removed}
        event = actor.event("cards.change", f"source:{source.id}", counts)
    with session_factory() as session:
        return kb_sources.record_sync(session, source.id, timed, state, event)


def _sync_site(
    source: RegisteredSource,
    settings: Settings,
    session_factory: SessionFactory,
    embedder: Embedder | None,
    confirm: bool,
    progress: bool,
) -> tuple[SyncRun, SourceState | None]:
    # What the KB held before the crawl, as the ingest read it (not read a second time here).
    stored: set[str] = set()

    def hold(crawl: CrawlResult, previous: Mapping[Site, PreviousCrawl]) -> str | None:
        stored.update(url for site in previous.values() for url in site.pages)
        if confirm:
            return None
        for site in crawl.sites:
            if site.prune_blocked is None:  # only a whole list can remove pages
                had = len(previous[site.site].pages)
                if (reason := held_reason(had, site.listed)) is not None:
                    return f"{reason}; `citewall sync {source.id} --confirm` applies it"
        return None

    plan = plan_sites([source.location])
    report = ingest_sites(
        [source.location],
        settings,
        license=source.license,
        audiences=source.audiences,
        prune=True,
        progress=progress,
        embedder=embedder,
        session_factory=session_factory,
        hold=hold,
    )
    refusals = tuple(Refused(r.url, r.reason) for r in report.refused)
    if report.held is not None:
        held = SyncRun(status="held", started_at=utcnow(), refusals=refusals, note=report.held)
        return held, None
    if all(site.listed == 0 and site.prune_blocked for site in report.crawl.sites):
        note = "; ".join(f"{s.site.key}: {s.prune_blocked}" for s in report.crawl.sites)
        failed = SyncRun(status="failed", started_at=utcnow(), refusals=refusals, note=note)
        return failed, None
    unreadable = [r.url for r in report.refused if not r.gone and r.url in stored]
    failing = failing_after(source.failing, unreadable)
    after = read_previous(plan, session_factory)
    card_ids = [page.card_id for previous in after.values() for page in previous.pages.values()]
    stale = tuple(stale_pages(failing, settings.sync_stale_after))
    run = _applied(report.ingest, refusals, "; ".join(report.notes), stale)
    return run, SourceState(card_ids, failing)


def _sync_files(
    source: RegisteredSource,
    settings: Settings,
    session_factory: SessionFactory,
    embedder: Embedder | None,
    confirm: bool,
    progress: bool,
) -> tuple[SyncRun, SourceState | None]:
    path = Path(source.location)
    if not path.exists():
        note = f"{path} does not exist (moved or unmounted?); the KB keeps the source's cards"
        return SyncRun(status="failed", started_at=utcnow(), note=note), None
    loaded = load_cards([path], document_max_bytes=settings.document_max_bytes)
    cards = with_source_audiences(loaded.cards, source.audiences)
    refusals = tuple(
        Refused(f"{e.path}:{e.line}" if e.line else str(e.path or path), str(e))
        for e in loaded.errors
    )
    previous = frozenset(source.card_ids)
    listed = len(loaded.cards) + len(loaded.refused_ids)
    if not confirm and (reason := held_reason(len(previous), listed)) is not None:
        note = f"{reason}; `citewall sync {source.id} --confirm` applies it"
        return SyncRun(status="held", started_at=utcnow(), refusals=refusals, note=note), None
    # A card that could not be identified might be one the source still has: keep them all.
    prune = not loaded.unidentified
    report = ingest_cards(
        cards,
        settings,
        embedder=embedder if embedder is not None else load_embedder(settings),
        session_factory=session_factory,
        prune=prune,
        keep_ids=loaded.refused_ids,
        prune_only=previous,
        progress=progress,
    )
    kept = previous if not prune else previous & loaded.refused_ids
    card_ids = sorted({c.id for c in cards} | kept)
    note = "" if prune else "nothing removed: a refused card names no id"
    return _applied(report, refusals, note), SourceState(card_ids)


def with_source_audiences(cards: Sequence[Card], audiences: Sequence[str]) -> list[Card]:
    """``cards`` with the source's audiences on each that names none of its own (in its file,
    sidecar or folder's ``_audiences.yaml``): the source's groups are the outermost folder's.

    >>> card = Card(id="a", title="A", body="b")
    >>> [c.audiences for c in with_source_audiences([card], ["enterprise"])]
    [('enterprise',)]
    """
    if not audiences:
        return list(cards)
    groups = tuple(audiences)
    return [c if c.audiences else c.model_copy(update={"audiences": groups}) for c in cards]


def _sync_playbooks(
    source: RegisteredSource,
    settings: Settings,
    session_factory: SessionFactory,
    embedder: Embedder | None,
) -> tuple[SyncRun, SourceState | None]:
    # The playbooks' source is their saved versions: the KB serves the newest of each.
    cards = playbook_cards(session_factory, list(source.card_ids))
    report = ingest_cards(
        cards,
        settings,
        embedder=embedder if embedder is not None else load_embedder(settings),
        session_factory=session_factory,
        prune=True,
        prune_only=frozenset(source.card_ids),
        progress=False,
        writes_playbooks=True,
    )
    return _applied(report, (), ""), SourceState(sorted(c.id for c in cards))


def _applied(
    report: IngestReport, refusals: tuple[Refused, ...], note: str, stale: tuple[str, ...] = ()
) -> SyncRun:
    """An applied run with the counts of the ingest it made (timed by ``sync_source``)."""
    return SyncRun(
        status="applied",
        started_at=utcnow(),
        added=report.added,
        updated=report.updated,
        unchanged=report.unchanged,
        removed=report.deleted,
        refusals=refusals,
        note=note,
        stale=stale,
    )


def remove_source(
    source_id: int,
    settings: Settings,
    *,
    session_factory: SessionFactory,
    embedder: Embedder | None = None,
    actor: Actor = SCHEDULE,
) -> tuple[RegisteredSource, int]:
    """Unregister a source and delete the cards it brought, from every index; returns the
    source and how many cards were deleted. The cards go first: if that fails, the source
    stays registered and the removal can be run again. Not while the source is being synced
    (``SyncRunningError``)."""
    with session_factory() as session:
        kb_sources.get_source(session, source_id)  # NotFoundError before the lease
    with source_lease(session_factory, source_id):
        return _remove_leased(source_id, settings, session_factory, embedder, actor)


def _remove_leased(
    source_id: int,
    settings: Settings,
    session_factory: SessionFactory,
    embedder: Embedder | None,
    actor: Actor,
) -> tuple[RegisteredSource, int]:
    with session_factory() as session:
        source = kb_sources.get_source(session, source_id)
    deleted = 0
    if source.card_ids:
        report = ingest_cards(
            [],
            settings,
            embedder=embedder if embedder is not None else load_embedder(settings),
            session_factory=session_factory,
            prune=True,
            prune_only=frozenset(source.card_ids),
            progress=False,
            writes_playbooks=source.kind == "playbooks",
        )
        deleted = report.deleted
    event = actor.event(
        "sources.change",
        f"source:{source.id}",
        {"removed": f"{source.kind} {source.location}", "deleted": deleted},
    )
    with session_factory() as session:
        kb_sources.remove_source(session, source_id, event)
    return source, deleted
