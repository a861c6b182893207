"""The process-wide runtime: settings, database, models, retriever and generator, built once.

Models load once per process (importing torch and loading the embedder costs seconds);
request handlers borrow them from the ``Runtime`` and never build their own.

Each component gets its own record of settings, not ``Settings`` whole (docs/architecture.md,
"Component settings"): the retriever a ``FusionSettings``, the cross-encoder a
``RerankSettings`` (both built by ``retrieval.factory``, which ingest's calibration uses too),
and the turn and answer path an ``AnswerPolicy``, built here (``answer_policy``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from citewall.boundary.staff_only import StaffVocabulary
from citewall.boundary.staff_vocabulary import StaffVocabularySource
from citewall.config import KbLanguage, Settings
from citewall.generation.factory import build_condenser, build_generator
from citewall.generation.followup import Condenser, RuleCondenser
from citewall.generation.protocols import Generator
from citewall.retrieval.answerability import Decider
from citewall.retrieval.embedder import load_embedder
from citewall.retrieval.factory import build_decider, build_retriever, kb_embedder
from citewall.retrieval.kb_embedder import KBEmbedder
from citewall.retrieval.protocols import Embedder, Retriever
from citewall.storage import db, schema
from citewall.storage.artifacts import DatabaseArtifactStore
from citewall.storage.types import utcnow
from citewall.text.language import load_detector


@dataclass(frozen=True, slots=True)
class AnswerPolicy:
    """What the answer pipeline reads (``answer_policy`` builds it from settings): how a turn
    decides what to retrieve with, whether to answer, and what it may repeat of internal
    cards. ``thresholds=None`` answers whenever something was retrieved."""

    condenser: Condenser = field(default_factory=RuleCondenser)
    #: The abstention decision (fixed ``Thresholds`` or the KB's calibration).
    thresholds: Decider | None = None
    #: Answer sentences that may copy internal text verbatim (``chat.corpus_protection``
    #: ``VerbatimCap``); 0: no cap.
    max_internal_sentences: int = 0
    #: Consecutive words shared with an internal card that count as copying it (the verbatim
    #: cap and the exposure record).
    span_words: int = 10
    #: The KB's language: a question confidently in another gets ``other_language_reply``
    #: (None: every question is retrieved).
    kb_language: KbLanguage | None = "en"
    #: The KB's staff-only vocabulary: answer sentences the detector flags are removed on
    #: every generator (``chat.staff_check``); None: no staff-only check.
    staff_vocabulary: StaffVocabulary | None = None


def answer_policy(
    settings: Settings,
    *,
    condenser: Condenser,
    thresholds: Decider | None,
    staff_vocabulary: Callable[[], StaffVocabulary],
) -> AnswerPolicy:
    """The turn's ``AnswerPolicy`` from ``settings`` (``staff_vocabulary`` is asked only when
    the staff-only check is on)."""
    return AnswerPolicy(
        condenser=condenser,
        thresholds=thresholds,
        max_internal_sentences=settings.max_internal_sentences,
        span_words=settings.verbatim_span_words,
        kb_language=settings.kb_language,
        staff_vocabulary=staff_vocabulary() if settings.staff_only_check else None,
    )


@dataclass(slots=True)
class Runtime:
    """Everything a request needs that is expensive to build."""

    settings: Settings
    engine: Engine
    session_factory: sessionmaker[Session]
    embedder: KBEmbedder
    retriever: Retriever
    generator: Generator
    condenser: Condenser
    #: The abstention decision (calibrated per KB, ``retrieval.calibrated``); None when off.
    thresholds: Decider | None
    #: The current time (UTC): stamps stored turns, drives the exposure budget's window and the
    #: rate limit. Injectable, so an evaluation can simulate days in seconds.
    clock: Callable[[], datetime] = field(default=utcnow)
    #: The KB's staff-only vocabulary, derived from the card catalogue once per version.
    staff_vocabulary: Callable[[], StaffVocabulary] = field(default=StaffVocabulary)

    @classmethod
    def from_settings(cls, settings: Settings, *, embedder: Embedder | None = None) -> Runtime:
        """Migrate the database, load the models and build the retriever and generator.

        ``embedder`` may be passed in to share one already loaded (tests load it once per
        session). Raises ``StorageError`` when the database cannot be reached or migrated.
        """
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        engine = db.make_engine(settings.sqlalchemy_url)
        schema.migrate(engine)
        session_factory = db.make_session_factory(engine)
        # On shared services the lexical index and sentence vectors come from the database.
        artifacts = DatabaseArtifactStore(session_factory) if settings.shared_kb else None
        # Sentence vectors stored at ingest answer what the generator would embed per turn.
        embedder = kb_embedder(settings, embedder or load_embedder(settings), artifacts)
        generator = build_generator(settings, embedder)
        load_detector()  # the question-language detector: with the models, not on a first turn
        return cls(
            settings=settings,
            engine=engine,
            session_factory=session_factory,
            embedder=embedder,
            retriever=build_retriever(settings, embedder=embedder, artifacts=artifacts),
            generator=generator,
            condenser=build_condenser(settings, generator),
            thresholds=build_decider(settings, artifacts),
            staff_vocabulary=StaffVocabularySource(session_factory),
        )

    def answer_policy(self) -> AnswerPolicy:
        """The policy of a turn starting now: built per turn, so that the staff-only
        vocabulary is the current KB version's."""
        return answer_policy(
            self.settings,
            condenser=self.condenser,
            thresholds=self.thresholds,
            staff_vocabulary=self.staff_vocabulary,
        )

    def retriever_status(self) -> dict[str, Any]:
        """The retriever's self-report (vector count, lexical index, reranker and why), the
        embedder's runtime and the sentence vectors in use."""
        try:
            return {
                **self.retriever.status(),
                "embedder": {"runtime": self.embedder.runtime},
                "shared_kb": self.settings.shared_kb,
                "sentence_vectors": self.embedder.status(),
                "answerability": self.answerability_status(),
            }
        except Exception as exc:  # a broken status call must not break /readyz itself
            return {"error": type(exc).__name__}

    def answerability_status(self) -> dict[str, Any]:
        """The abstention decision in use (thresholds, their source, the stored calibration)."""
        return self.thresholds.status() if self.thresholds is not None else {"source": "off"}

    def close(self) -> None:
        """Release the database pool (models are freed with the process)."""
        self.engine.dispose()
