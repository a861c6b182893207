"""The KB's published artifacts (the lexical index, the sentence vectors) shared through a store
every replica reaches, so a replica needs no shared disk.

An ingest builds a version locally (``versioned_dir``), then ``push`` packs that version
directory (an uncompressed tar) into the store under its version name. A replica's live artifact
(``shared_loader``) checks the store's newest version at most once per ``interval_s``
(``StoreProbe``); when it moved, ``pull`` copies that version into the replica's own local
directory (a cache: empty at start, never shared) and the replica loads it from there, memory
mapped as before. The copy is checked against the sha256 the pusher stored, so a replica loads
the bytes the ingest built or nothing.

Failures degrade, never stop a replica: a store that cannot be reached keeps the version already
loaded (the probe answers what it saw last); a pull that fails leaves the artifact unavailable
with the reason (the retriever runs ``dense_only`` and says so).
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol, TypeVar

from citewall.retrieval.reloading import ArtifactError
from citewall.retrieval.versioned_dir import VERSION_RE, current_version, publish

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Bytes per stored part: bounds the memory a push or pull holds, and keeps each value far
#: below PostgreSQL's 1 GB limit on one bytea.
PART_BYTES = 32 * 1024 * 1024
#: Seconds between two checks of the store's newest version (a replica picks up an ingest
#: within this plus the time to copy and load the new version).
PROBE_INTERVAL_S = 1.0


@dataclass(frozen=True, slots=True)
class StoredVersion:
    """One version of an artifact in the store: its name, the sha256 and size of its packed
    bytes."""

    version: str
    sha256: str
    size: int


class ArtifactStore(Protocol):
    """Where published artifacts are shared (the database, ``storage.artifacts``)."""

    def latest(self, name: str) -> StoredVersion | None:
        """The newest complete version of ``name``, or None when none was pushed."""
        ...

    def parts(self, name: str, version: str) -> Iterator[bytes]:
        """The packed bytes of that version, part by part, in order."""
        ...

    def put(self, name: str, stored: StoredVersion, parts: Iterable[bytes]) -> None:
        """Store a version whole (all parts, or nothing) and make it the newest."""
        ...


class SharedArtifactError(ArtifactError):
    """A shared artifact could not be copied from the store (the message says why)."""


def _pack(directory: Path, out: IO[bytes]) -> None:
    with tarfile.open(fileobj=out, mode="w") as tar:
        for path in sorted(directory.iterdir()):
            tar.add(path, arcname=path.name, recursive=True)


def _read_parts(handle: IO[bytes]) -> Iterator[bytes]:
    handle.seek(0)
    while chunk := handle.read(PART_BYTES):
        yield chunk


def push(store: ArtifactStore, name: str, directory: Path) -> str | None:
    """Store the live local version of ``directory`` as ``name`` unless the store already has
    it as its newest; returns the version (None when nothing is published locally)."""
    version = current_version(directory)
    if version is None:
        return None
    latest = store.latest(name)
    if latest is not None and latest.version == version:
        return version
    with tempfile.TemporaryFile() as packed:
        _pack(directory / version, packed)
        size = packed.tell()
        digest = hashlib.sha256()
        for chunk in _read_parts(packed):
            digest.update(chunk)
        store.put(name, StoredVersion(version, digest.hexdigest(), size), _read_parts(packed))
    log.info("pushed %s %s (%d bytes)", name, version, size)
    return version


def pull(store: ArtifactStore, name: str, directory: Path) -> str | None:
    """Make the store's newest version of ``name`` the live version of ``directory`` (copied
    only when it is not already here); returns it, or None when the store has none.

    Raises ``SharedArtifactError`` when the copy is incomplete or does not match its sha256.
    """
    latest = store.latest(name)
    if latest is None:
        return None
    if not VERSION_RE.fullmatch(latest.version):
        raise SharedArtifactError(f"shared {name}: not a version name {latest.version!r}")
    if current_version(directory) == latest.version:
        return latest.version
    publish(directory, lambda tmp, _: _unpack(store, name, latest, tmp), version=latest.version)
    log.info("pulled %s %s (%d bytes)", name, latest.version, latest.size)
    return latest.version


def _unpack(store: ArtifactStore, name: str, stored: StoredVersion, into: Path) -> None:
    with tempfile.TemporaryFile() as packed:
        digest = hashlib.sha256()
        for chunk in store.parts(name, stored.version):
            digest.update(chunk)
            packed.write(chunk)
        if packed.tell() != stored.size or digest.hexdigest() != stored.sha256:
            raise SharedArtifactError(
                f"shared {name} {stored.version}: {packed.tell()} bytes that do not match the "
                f"stored size {stored.size} and sha256"
            )
        packed.seek(0)
        try:
            with tarfile.open(fileobj=packed, mode="r") as tar:
                tar.extractall(into, filter="data")  # refuses absolute paths and links out
        except (tarfile.TarError, OSError) as exc:
            shutil.rmtree(into, ignore_errors=True)
            into.mkdir()
            raise SharedArtifactError(f"shared {name} {stored.version}: {exc}") from exc


class StoreProbe:
    """The store's newest version of ``name``, asked at most once per ``interval_s``.

    A store that cannot be reached answers what was seen last (the loaded version stays live),
    logged once per outage.
    """

    def __init__(
        self,
        store: ArtifactStore,
        name: str,
        *,
        interval_s: float = PROBE_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._name = name
        self._interval_s = interval_s
        self._clock = clock
        self._lock = threading.Lock()
        self._checked_at: float | None = None
        self._seen: str | None = None
        self._failing = False

    def __call__(self) -> str | None:
        with self._lock:
            now = self._clock()
            if self._checked_at is not None and now - self._checked_at < self._interval_s:
                return self._seen
            self._checked_at = now
            try:
                latest = self._store.latest(self._name)
            except Exception as exc:  # an outage keeps what is loaded
                if not self._failing:
                    log.warning("shared %s: cannot check for a new version: %s", self._name, exc)
                self._failing = True
                return self._seen
            self._failing = False
            self._seen = latest.version if latest is not None else None
            return self._seen


def shared_loader(
    store: ArtifactStore, name: str, directory: Path, load: Callable[[Path], T]
) -> Callable[[], T]:
    """A loader for ``ReloadingArtifact``: copy the store's newest version of ``name`` into
    ``directory`` (when the store has one), then ``load(directory)``."""

    def loader() -> T:
        try:
            pulled = pull(store, name, directory)
        except SharedArtifactError:
            raise
        except Exception as exc:
            raise SharedArtifactError(
                f"shared {name}: cannot copy from the store: {type(exc).__name__}: {exc}"
            ) from exc
        try:
            return load(directory)
        except ArtifactError as exc:
            if pulled is not None:
                raise
            raise SharedArtifactError(
                f"no {name} stored for the replicas yet: run `citewall ingest` once, from any "
                f"host; every replica picks it up without a restart ({exc})"
            ) from exc

    return loader
