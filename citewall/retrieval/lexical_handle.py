"""The live lexical index, reloaded when an ingest (in any process) publishes a new version.

``current()`` makes one cheap check of the published version per call (a tiny file read) and
reloads when it changed, so a server picks up an ingest without a restart. A missing, corrupt
or failing artifact is not an exception here: ``current()`` then returns no index and the
reason, and the retriever runs ``dense_only``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from citewall.retrieval.lexical_index import LexicalIndexError
from citewall.retrieval.protocols import LexicalIndex

log = logging.getLogger(__name__)


class ReloadingLexicalIndex:
    """Holds the loaded index (or why there is none) and swaps it when the version moves."""

    def __init__(
        self,
        loader: Callable[[], LexicalIndex],
        probe: Callable[[], str | None] | None = None,
    ) -> None:
        self._loader = loader
        self._probe = probe
        self._seen_version: str | None = None
        self._lock = threading.Lock()
        self.index: LexicalIndex | None = None
        self.error: str | None = None
        self.reload()

    def reload(self) -> None:
        """(Re)load the artifact now. A bad artifact leaves no index and the reason."""
        seen = self._probe() if self._probe is not None else None
        try:
            index: LexicalIndex | None = self._loader()
            error = None
        except LexicalIndexError as exc:
            index, error = None, str(exc)
        except Exception as exc:  # an unexpected loader failure must not stop the server
            index, error = None, f"BM25 index failed to load: {type(exc).__name__}: {exc}"
        with self._lock:
            self.index, self.error, self._seen_version = index, error, seen
        if error:
            log.warning("lexical index unavailable, retrieval runs dense_only: %s", error)

    def current(self) -> tuple[LexicalIndex | None, str | None]:
        """The index to query now (reloaded first if a new version was published), or None
        and why."""
        if self._probe is not None and self._probe() != self._seen_version:
            self.reload()
        with self._lock:
            return self.index, self.error
