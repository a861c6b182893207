"""A live artifact (the lexical index, the sentence vectors), reloaded when an ingest in any
process publishes a new version.

``current()`` makes one cheap check of the published version per call (a tiny file read) and
reloads when it changed, so a server picks up an ingest without a restart. A missing, corrupt
or failing artifact is not an exception here: ``current()`` then returns no artifact and the
reason, and the caller degrades (the retriever runs ``dense_only``; sentences are embedded per
turn).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from citewall.errors import RetrievalError

log = logging.getLogger(__name__)

T = TypeVar("T")


class ArtifactError(RetrievalError):
    """A published artifact is missing, incomplete or corrupt (the message says which file)."""


class ReloadingArtifact(Generic[T]):
    """Holds the loaded artifact (or why there is none) and swaps it when the version moves.

    ``name`` and ``fallback`` word the log line and the reason: "BM25 index failed to load:
    ..." and "... retrieval runs dense_only".
    """

    def __init__(
        self,
        loader: Callable[[], T],
        probe: Callable[[], str | None] | None = None,
        *,
        name: str = "BM25 index",
        fallback: str = "retrieval runs dense_only",
    ) -> None:
        self._loader = loader
        self._probe = probe
        self._name = name
        self._fallback = fallback
        self._seen_version: str | None = None
        self._lock = threading.Lock()
        self.artifact: T | None = None
        self.error: str | None = None
        self.reload()

    def reload(self) -> None:
        """(Re)load the artifact now. A bad artifact leaves none and the reason."""
        seen = self._probe() if self._probe is not None else None
        try:
            artifact: T | None = self._loader()
            error = None
        except ArtifactError as exc:
            artifact, error = None, str(exc)
        except Exception as exc:  # an unexpected loader failure must not stop the server
            artifact, error = None, f"{self._name} failed to load: {type(exc).__name__}: {exc}"
        with self._lock:
            self.artifact, self.error, self._seen_version = artifact, error, seen
        if error:
            log.warning("%s unavailable, %s: %s", self._name, self._fallback, error)

    def current(self) -> tuple[T | None, str | None]:
        """The artifact to use now (reloaded first if a new version was published), or None
        and why."""
        if self._probe is not None and self._probe() != self._seen_version:
            self.reload()
        with self._lock:
            return self.artifact, self.error
