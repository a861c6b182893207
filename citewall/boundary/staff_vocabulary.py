"""The KB's staff-only vocabulary (``boundary.staff_only``), derived from the card catalogue.

Rebuilt when the catalogue's version changes (an ingest added, changed or deleted cards), so
it always describes the KB the retriever answers from; between ingests every answer reuses it.
"""

from __future__ import annotations

import threading

from sqlalchemy.orm import Session, sessionmaker

from citewall.boundary.staff_only import StaffVocabulary, staff_vocabulary
from citewall.storage.cards import card_texts, catalogue_version


class StaffVocabularySource:
    """The KB's ``StaffVocabulary``, rebuilt from the card catalogue when its version changes
    (one small query per answer to read the version; the rebuild reads every card once)."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions
        self._lock = threading.Lock()
        self._version: tuple[int, int] | None = None
        self._vocabulary = StaffVocabulary()

    def __call__(self) -> StaffVocabulary:
        with self._sessions() as session:
            version = catalogue_version(session)
            with self._lock:
                if version != self._version:
                    texts = card_texts(session)
                    self._vocabulary = staff_vocabulary(
                        (t for t, external in texts if not external),
                        (t for t, external in texts if external),
                    )
                    self._version = version
                return self._vocabulary
