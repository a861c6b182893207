"""SQLAlchemy 2 models: one schema for SQLite and PostgreSQL.

The tables and their columns are fixed by decision 0004
(docs/decisions/0004-storage-and-entry-performance.md); migrations in
``citewall/storage/migrations/versions`` create exactly this. Timestamps are UTC-aware
(``UTCDateTime``); JSON columns are JSONB on PostgreSQL and JSON on SQLite (``JSONType``); free
text columns (``TextType``, ``StringType``) store any string, made ``encodable`` on the way in.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, ClassVar, Literal

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from citewall.retrieval.types import HybridPath
from citewall.storage.types import JSONType, StringType, TextType, UTCDateTime, utcnow

#: Roles a user may have. ``admin`` sees full data (internal sources, all conversations).
Role = Literal["member", "admin"]
ROLES: tuple[Role, ...] = ("member", "admin")

#: What an assistant message did: answered from the knowledge base, honestly did not (nothing
#: relevant, a question the KB does not cover), was stopped by the member mid-answer (the prose
#: said so far is kept, its citations reconciled to what it cites), said which language it
#: answers in (a question in another language: ``text.language``), or replied to small talk
#: ("hi", "thanks": ``chat.smalltalk``), which asks nothing of the knowledge base.
AnswerStatus = Literal["answered", "not_found", "stopped", "other_language", "small_talk"]
ANSWER_STATUSES: tuple[AnswerStatus, ...] = (
    "answered",
    "not_found",
    "stopped",
    "other_language",
    "small_talk",
)

#: A member's verdict on an answer.
Rating = Literal["up", "down"]
RATINGS: tuple[Rating, ...] = ("up", "down")

#: Why an answer was limited to external knowledge: the member's exposure budget was spent.
Restriction = Literal["exposure_budget"]
RESTRICTIONS: tuple[Restriction, ...] = ("exposure_budget",)

# Deterministic constraint names, so migrations can name what they drop on both databases.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def new_uuid() -> str:
    """A random uuid4 as its 36-character string (conversation and message ids)."""
    return str(uuid.uuid4())


class Base(DeclarativeBase):
    """Declarative base carrying the naming convention and the shared type map."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: UTCDateTime(),
        dict[str, Any]: JSONType(),
    }


class User(Base):
    """Someone who may call the API. Disabled users keep their history but cannot sign in.

    Users signed in by a host site's token or an identity-aware proxy's assertion are keyed by
    that token's ``issuer`` and ``subject`` (unique together); both are None for users made
    with ``citewall users add``.
    """

    __tablename__ = "users"
    __table_args__ = (
        CheckConstraint("role IN ('member', 'admin')", name="role"),
        Index("ix_users_issuer_subject", "issuer", "subject", unique=True),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(StringType(100), unique=True)
    role: Mapped[Role] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    disabled_at: Mapped[datetime | None] = mapped_column(default=None)
    issuer: Mapped[str | None] = mapped_column(String(255), default=None)
    subject: Mapped[str | None] = mapped_column(String(255), default=None)
    email: Mapped[str | None] = mapped_column(StringType(320), default=None)
    #: A member's groups (``kb.audiences``): from the host token's groups claim at every
    #: sign-in, or set by ``citewall users groups``. Admins see every card whatever these say.
    groups: Mapped[list[str]] = mapped_column(JSONType(), default=list)

    tokens: Mapped[list[ApiToken]] = relationship(
        back_populates="user", order_by="ApiToken.id", lazy="raise_on_sql"
    )

    def __repr__(self) -> str:
        return f"User(id={self.id!r}, name={self.name!r}, role={self.role!r})"


class ApiToken(Base):
    """A bearer token, stored only as its sha256 hex digest plus an 8-character display prefix.

    A session (issued for a host site's token) has ``expires_at``; an API token has none.
    """

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(8), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)
    last_used_at: Mapped[datetime | None] = mapped_column(default=None)
    expires_at: Mapped[datetime | None] = mapped_column(default=None)

    user: Mapped[User] = relationship(back_populates="tokens", lazy="raise_on_sql")

    def __repr__(self) -> str:
        return f"ApiToken(id={self.id!r}, prefix={self.prefix!r}, user_id={self.user_id!r})"


class Conversation(Base):
    """A thread of messages owned by one user."""

    __tablename__ = "conversations"
    __table_args__ = (Index("ix_conversations_user_id_updated_at", "user_id", "updated_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_uuid)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(StringType(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    #: When its member deleted it (None: shown). A hidden conversation is unknown to its member
    #: (404 everywhere); its turns stay stored for analytics and exposure accounting.
    hidden_at: Mapped[datetime | None] = mapped_column(default=None)

    def __repr__(self) -> str:
        return f"Conversation(id={self.id!r}, user_id={self.user_id!r})"


class Message(Base):
    """One turn side. Assistant content keeps its ``[n]`` markers; ``sources`` is the FULL list.

    ``sources`` is what the pipeline produced (internal cards included) and is what the
    entry-performance rollup unnests; only the serve boundary decides what a member sees.
    """

    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("conversation_id", "seq"),
        CheckConstraint("role IN ('user', 'assistant')", name="role"),
        Index("ix_messages_role_created_at", "role", "created_at"),
        Index("ix_messages_answer_status_created_at", "answer_status", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_uuid)
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(TextType())
    sources: Mapped[list[dict[str, Any]]] = mapped_column(JSONType(), default=list)
    hybrid_path: Mapped[HybridPath | None] = mapped_column(String(16), default=None)
    timings: Mapped[dict[str, Any]] = mapped_column(JSONType(), default=dict)
    generator: Mapped[str | None] = mapped_column(StringType(100), default=None)
    dropped_markers: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: An ``AnswerStatus`` on assistant messages, None on user messages.
    answer_status: Mapped[AnswerStatus | None] = mapped_column(String(16), default=None)
    #: The answerability signal the status was decided on (``chat.answerability``).
    support: Mapped[float | None] = mapped_column(Double, default=None)
    #: Why this answer was limited to external knowledge (``Restriction``), None when it was
    #: not. Admin data: no member schema carries it.
    restricted: Mapped[Restriction | None] = mapped_column(String(32), default=None)
    #: The answer this one replaced (a regenerated answer), None otherwise. The replaced answer
    #: stays in the conversation, before this one.
    regenerated_from: Mapped[str | None] = mapped_column(String(36), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: When retention or an erasure removed its words (``storage.content``), None while kept.
    content_removed_at: Mapped[datetime | None] = mapped_column(default=None)
    #: The knowledge-gaps coverage of an answer's question, frozen when its words were removed
    #: (``storage.gaps`` reads it then); None while the question is stored.
    coverage: Mapped[float | None] = mapped_column(Double, default=None)

    def __repr__(self) -> str:
        return f"Message(id={self.id!r}, seq={self.seq!r}, role={self.role!r})"


class Feedback(Base):
    """One member's rating of one answer (thumbs up or down, optional comment).

    At most one per member per answer: rating again replaces it (``updated_at`` moves on).
    """

    __tablename__ = "feedback"
    __table_args__ = (
        UniqueConstraint("message_id", "user_id"),
        CheckConstraint("rating IN ('up', 'down')", name="rating"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    message_id: Mapped[str] = mapped_column(ForeignKey("messages.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    rating: Mapped[Rating] = mapped_column(String(8))
    comment: Mapped[str | None] = mapped_column(TextType(), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)

    def __repr__(self) -> str:
        return f"Feedback(message_id={self.message_id!r}, rating={self.rating!r})"


class Exposure(Base):
    """How much of one internal card reached one member in one answer (docs/distillation.md).

    One row per internal card of the answer's context that the answer cited or copied from:
    ``sentences`` are the keys of the card's sentences the answer's prose repeats whole
    (``citations.verbatim.sentence_key``), ``card_sentences`` how many the card's text in the
    context had, ``longest_span`` the longest run of words the prose shares with it. Written
    with the turn; read by the exposure budget and the admin exposure report.
    """

    __tablename__ = "exposures"
    __table_args__ = (Index("ix_exposures_user_id_created_at", "user_id", "created_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    message_id: Mapped[str] = mapped_column(
        ForeignKey("messages.id", ondelete="CASCADE"), index=True
    )
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), index=True
    )
    card_id: Mapped[str] = mapped_column(String(200))
    cited: Mapped[bool] = mapped_column(Boolean, default=False)
    sentences: Mapped[list[str]] = mapped_column(JSONType(), default=list)
    card_sentences: Mapped[int] = mapped_column(Integer, default=0)
    longest_span: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)

    def __repr__(self) -> str:
        return f"Exposure(user_id={self.user_id!r}, card_id={self.card_id!r})"


class ExposureReservation(Base):
    """An internal card of a turn's context held against its member's exposure budget while
    the turn answers (``storage.exposure.reservations``, docs/distillation.md).

    Written before the answer is generated, in the transaction that decides the budget; the
    turn's save replaces its reservations with ``Exposure`` rows. A reservation whose turn was
    never stored stays, and counts, until it leaves the budget's window.
    """

    __tablename__ = "exposure_reservations"
    __table_args__ = (
        Index("ix_exposure_reservations_user_id_created_at", "user_id", "created_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    #: The turn holding it (one key per turn; its save deletes the turn's rows).
    reservation: Mapped[str] = mapped_column(String(36), index=True)
    card_id: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    def __repr__(self) -> str:
        return f"ExposureReservation(user_id={self.user_id!r}, card_id={self.card_id!r})"


class RetrievalEvent(Base):
    """One retrieved card in one assistant turn: its rank and score at every stage.

    ``card_id`` is deliberately not a foreign key: events outlive a card's removal from the KB.
    Ranks are 1-based; ``None`` means the stage did not run or did not rank the card.
    """

    __tablename__ = "retrieval_events"
    __table_args__ = (Index("ix_retrieval_events_card_id_created_at", "card_id", "created_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    message_id: Mapped[str] = mapped_column(
        ForeignKey("messages.id", ondelete="CASCADE"), index=True
    )
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), index=True
    )
    card_id: Mapped[str] = mapped_column(String(200))
    final_rank: Mapped[int] = mapped_column(Integer)
    dense_rank: Mapped[int | None] = mapped_column(Integer, default=None)
    dense_score: Mapped[float | None] = mapped_column(Double, default=None)
    bm25_rank: Mapped[int | None] = mapped_column(Integer, default=None)
    bm25_score: Mapped[float | None] = mapped_column(Double, default=None)
    rrf_rank: Mapped[int | None] = mapped_column(Integer, default=None)
    rrf_score: Mapped[float | None] = mapped_column(Double, default=None)
    rerank_rank: Mapped[int | None] = mapped_column(Integer, default=None)
    rerank_logit: Mapped[float | None] = mapped_column(Double, default=None)
    hybrid_path: Mapped[str | None] = mapped_column(String(16), default=None)
    cited: Mapped[bool] = mapped_column(Boolean, default=False)
    is_external: Mapped[bool] = mapped_column(Boolean, default=False)
    #: The text retrieval ran with (a follow-up's includes the question it leans on).
    query: Mapped[str | None] = mapped_column(TextType(), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)

    def __repr__(self) -> str:
        return f"RetrievalEvent(card_id={self.card_id!r}, final_rank={self.final_rank!r})"


class CardRow(Base):
    """The catalogue entry of a KB card. ``meta`` maps to the ``metadata`` column.

    (``metadata`` is reserved on declarative classes, hence the attribute name.)
    """

    __tablename__ = "cards"

    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    title: Mapped[str] = mapped_column(StringType(500))
    body: Mapped[str] = mapped_column(TextType())
    url: Mapped[str | None] = mapped_column(TextType(), default=None)
    license: Mapped[str | None] = mapped_column(TextType(), default=None)
    #: An internal card's member-facing part (``Card.reply``); None on external cards.
    reply: Mapped[str | None] = mapped_column(TextType(), default=None)
    #: The groups the card is for (``Card.audiences``); empty: every member.
    audiences: Mapped[list[str]] = mapped_column(JSONType(), default=list)
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSONType(), default=dict)
    content_hash: Mapped[str] = mapped_column(String(64))
    ingest_version: Mapped[int] = mapped_column(Integer, index=True)
    is_external: Mapped[bool] = mapped_column(Boolean, index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: Set while an admin has the card disabled: kept here, absent from every index.
    disabled_at: Mapped[datetime | None] = mapped_column(default=None)
    disabled_by: Mapped[str | None] = mapped_column(StringType(320), default=None)

    def __repr__(self) -> str:
        return f"CardRow(id={self.id!r}, ingest_version={self.ingest_version!r})"


class CardVersion(Base):
    """One saved version of a playbook written in the admin pages (``ingest.playbooks``).

    Versions of a card are numbered from 1 without gaps; a rollback is a new version holding
    an earlier one's fields (``restored_from``). Not a foreign key to ``cards``: the history
    outlives the card.
    """

    __tablename__ = "card_versions"
    __table_args__ = (UniqueConstraint("card_id", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    card_id: Mapped[str] = mapped_column(String(200), index=True)
    version: Mapped[int] = mapped_column(Integer)
    title: Mapped[str] = mapped_column(StringType(500))
    body: Mapped[str] = mapped_column(TextType())
    reply: Mapped[str | None] = mapped_column(TextType(), default=None)
    audiences: Mapped[list[str]] = mapped_column(JSONType(), default=list)
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSONType(), default=dict)
    author: Mapped[str] = mapped_column(StringType(320))
    author_user_id: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    restored_from: Mapped[int | None] = mapped_column(Integer, default=None)

    def __repr__(self) -> str:
        return f"CardVersion(card_id={self.card_id!r}, version={self.version!r})"


class KBArtifact(Base):
    """One version of a published KB artifact (``bm25``, ``sentences``), shared by every
    replica through the database: its packed bytes are the rows of ``KBArtifactPart``.

    A version's rows are written in one transaction, so a reader sees it whole or not at all;
    the newest is the one with the highest ``id`` for its name.
    """

    __tablename__ = "kb_artifacts"
    __table_args__ = (UniqueConstraint("name", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(32))
    version: Mapped[str] = mapped_column(String(64))
    sha256: Mapped[str] = mapped_column(String(64))
    size: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    def __repr__(self) -> str:
        return f"KBArtifact(name={self.name!r}, version={self.version!r})"


class KBArtifactPart(Base):
    """Part ``part`` (from 0) of a ``KBArtifact``'s packed bytes."""

    __tablename__ = "kb_artifact_parts"

    artifact_id: Mapped[int] = mapped_column(
        ForeignKey("kb_artifacts.id", ondelete="CASCADE"), primary_key=True
    )
    part: Mapped[int] = mapped_column(Integer, primary_key=True)
    payload: Mapped[bytes] = mapped_column(LargeBinary)


class UsedHostToken(Base):
    """A host token already exchanged for a session, kept until the token can no longer verify
    (its ``exp`` plus the clock-skew leeway), so it signs in once on every replica.

    ``token_key`` is ``auth.replay.replay_key``'s sha256: of the issuer and ``jti``, or of the
    signed part of a token without one. The primary key makes the second use fail.
    """

    __tablename__ = "used_host_tokens"

    token_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[datetime] = mapped_column(index=True)

    def __repr__(self) -> str:
        return f"UsedHostToken(token_key={self.token_key[:12]!r}...)"


#: What a registered KB source is: a help center (sitemap or page), a document folder, a card
#: file, the playbooks written in the admin pages (``ingest.playbooks``), or the folder of
#: documents uploaded there (``ingest.uploads``).
SourceKind = Literal["site", "folder", "cards", "playbooks", "uploads"]
SOURCE_KINDS: tuple[SourceKind, ...] = ("site", "folder", "cards", "playbooks", "uploads")

#: How a sync ended: the KB now matches the source, the change was held for an admin to
#: confirm (the source shrank too much), or the source could not be read at all.
SyncStatus = Literal["applied", "held", "failed"]
SYNC_STATUSES: tuple[SyncStatus, ...] = ("applied", "held", "failed")


class KBSource(Base):
    """A registered source of the KB, stored so that every replica sees the same list.

    ``card_ids``: the cards its last applied sync left in the KB (what a later sync may remove
    and what removing the source deletes). ``failing``: per page URL, how many syncs in a row
    could not read it for a reason that does not say it is gone (a timeout, a 5xx).
    """

    __tablename__ = "kb_sources"
    __table_args__ = (
        UniqueConstraint("kind", "location"),
        CheckConstraint("kind IN ('site', 'folder', 'cards', 'playbooks', 'uploads')", name="kind"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(16))
    location: Mapped[str] = mapped_column(StringType(2000))
    license: Mapped[str | None] = mapped_column(TextType(), default=None)
    every_s: Mapped[int | None] = mapped_column(Integer, default=None)
    card_ids: Mapped[list[str]] = mapped_column(JSONType(), default=list)
    failing: Mapped[dict[str, int]] = mapped_column(JSONType(), default=dict)
    #: The groups the source's cards are for (``--audience``); empty: every member.
    audiences: Mapped[list[str]] = mapped_column(JSONType(), default=list)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_sync_at: Mapped[datetime | None] = mapped_column(default=None)
    next_sync_at: Mapped[datetime | None] = mapped_column(default=None, index=True)

    def __repr__(self) -> str:
        return f"KBSource(id={self.id!r}, kind={self.kind!r}, location={self.location!r})"


class IngestRun(Base):
    """One sync of a registered source: its counts, refusals and duration. Kept when the source
    is removed (``source_id`` becomes NULL), as the history of what changed the KB."""

    __tablename__ = "ingest_runs"
    __table_args__ = (CheckConstraint("status IN ('applied', 'held', 'failed')", name="status"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    source_id: Mapped[int | None] = mapped_column(
        ForeignKey("kb_sources.id", ondelete="SET NULL"), index=True, default=None
    )
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    duration_s: Mapped[float] = mapped_column(Double, default=0.0)
    status: Mapped[str] = mapped_column(String(16))
    added: Mapped[int] = mapped_column(Integer, default=0)
    updated: Mapped[int] = mapped_column(Integer, default=0)
    unchanged: Mapped[int] = mapped_column(Integer, default=0)
    removed: Mapped[int] = mapped_column(Integer, default=0)
    refused: Mapped[int] = mapped_column(Integer, default=0)
    #: ``[{"where": url or file:line, "reason": ...}]``, every refusal of the run.
    refusals: Mapped[list[dict[str, str]]] = mapped_column(JSONType(), default=list)
    #: Why the run was held or failed, or what an operator should know; empty otherwise.
    note: Mapped[str] = mapped_column(TextType(), default="")
    #: Pages that could not be read for ``sync_stale_after`` syncs in a row (kept, stale).
    stale: Mapped[list[str]] = mapped_column(JSONType(), default=list)

    def __repr__(self) -> str:
        return f"IngestRun(id={self.id!r}, source_id={self.source_id!r}, status={self.status!r})"


class Upload(Base):
    """A document uploaded from the admin pages (``ingest.uploads``): stored as ``name`` in the
    uploads folder, with the cards its last ingest made and that run. Uploading the same
    ``name`` again replaces it (the row is updated)."""

    __tablename__ = "uploads"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    #: The file's name in the uploads folder (a slug of the uploaded name, its suffix kept).
    name: Mapped[str] = mapped_column(String(200), unique=True)
    #: The name the admin's file had.
    filename: Mapped[str] = mapped_column(StringType(255))
    format: Mapped[str] = mapped_column(String(16))
    size_bytes: Mapped[int] = mapped_column(Integer)
    url: Mapped[str | None] = mapped_column(StringType(2000), default=None)
    license: Mapped[str | None] = mapped_column(TextType(), default=None)
    audiences: Mapped[list[str]] = mapped_column(JSONType(), default=list)
    card_ids: Mapped[list[str]] = mapped_column(JSONType(), default=list)
    run_id: Mapped[int | None] = mapped_column(
        ForeignKey("ingest_runs.id", ondelete="SET NULL"), default=None
    )
    uploaded_by: Mapped[str] = mapped_column(StringType(320))
    uploaded_by_user_id: Mapped[int | None] = mapped_column(Integer, default=None)
    uploaded_at: Mapped[datetime] = mapped_column(default=utcnow)

    def __repr__(self) -> str:
        return f"Upload(id={self.id!r}, name={self.name!r})"


#: Where an admin saved a test question from: a conversation turn, a knowledge gap, a rated answer.
EvalQuestionSource = Literal["conversation", "gap", "feedback"]
EVAL_QUESTION_SOURCES: tuple[EvalQuestionSource, ...] = ("conversation", "gap", "feedback")


class EvalQuestion(Base):
    """A test question an admin saved from a stored answer ("Save as test question"): the
    member's question, the earlier messages of its conversation, and either the cards that
    should have answered it or that the knowledge base cannot (``unanswerable``). Exported as
    a line of ``citewall eval kb``'s questions file (``storage.eval_questions``).

    One per answer: saving the same answer again replaces it. The answer may go (its member
    deleted, the conversation purged): the question stays, ``message_id`` NULL.
    """

    __tablename__ = "eval_questions"
    __table_args__ = (
        CheckConstraint("source IN ('conversation', 'gap', 'feedback')", name="source"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    question: Mapped[str] = mapped_column(TextType())
    #: Card ids that answer it (empty when ``unanswerable``).
    expected: Mapped[list[str]] = mapped_column(JSONType(), default=list)
    unanswerable: Mapped[bool] = mapped_column(Boolean, default=False)
    facts: Mapped[list[str]] = mapped_column(JSONType(), default=list)
    #: The earlier messages, oldest first: ``{"role", "content"}`` (content as stored).
    conversation: Mapped[list[dict[str, str]]] = mapped_column(JSONType(), default=list)
    source: Mapped[EvalQuestionSource] = mapped_column(String(16))
    message_id: Mapped[str | None] = mapped_column(
        ForeignKey("messages.id", ondelete="SET NULL"), unique=True, default=None
    )
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

    def __repr__(self) -> str:
        return f"EvalQuestion(id={self.id!r}, source={self.source!r})"


#: Where a handoff's delivery stands: waiting for (another) attempt, accepted by the helpdesk,
#: or given up (a 4xx answer, or still refused when its retry time ran out).
HandoffStatus = Literal["pending", "delivered", "failed"]
HANDOFF_STATUSES: tuple[HandoffStatus, ...] = ("pending", "delivered", "failed")


class Handoff(Base):
    """A member's request for a person, and its delivery to the helpdesk (the outbox row).

    ``payload`` is the body delivered, built and committed with the request, so every attempt
    sends the same bytes. A replica delivers it only while it holds the lease
    (``lease_owner`` until ``lease_until``), taken with one conditional UPDATE
    (``storage.handoffs.claim_due``).
    """

    __tablename__ = "handoffs"
    __table_args__ = (
        CheckConstraint("status IN ('pending', 'delivered', 'failed')", name="status"),
        Index("ix_handoffs_status_next_attempt_at", "status", "next_attempt_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_uuid)
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    message: Mapped[str | None] = mapped_column(TextType(), default=None)
    #: What the helpdesk receives; NULL once retention or an erasure removed the words.
    payload: Mapped[dict[str, Any] | None] = mapped_column(JSONType(), default=dict)
    status: Mapped[HandoffStatus] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(default=utcnow)
    lease_owner: Mapped[str | None] = mapped_column(String(36), default=None)
    lease_until: Mapped[datetime | None] = mapped_column(default=None)
    last_error: Mapped[str | None] = mapped_column(TextType(), default=None)
    delivered_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)

    def __repr__(self) -> str:
        return f"Handoff(id={self.id!r}, status={self.status!r})"


class HandoffAttempt(Base):
    """One delivery attempt of a handoff: when, the HTTP status (None: no answer) and why it
    did not count when it did not."""

    __tablename__ = "handoff_attempts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    handoff_id: Mapped[str] = mapped_column(
        ForeignKey("handoffs.id", ondelete="CASCADE"), index=True
    )
    attempted_at: Mapped[datetime] = mapped_column(default=utcnow)
    status_code: Mapped[int | None] = mapped_column(Integer, default=None)
    error: Mapped[str | None] = mapped_column(TextType(), default=None)
    duration_ms: Mapped[float] = mapped_column(Double, default=0.0)
    replica: Mapped[str] = mapped_column(String(36))

    def __repr__(self) -> str:
        return f"HandoffAttempt(handoff_id={self.handoff_id!r}, status_code={self.status_code!r})"


class AuditEntry(Base):
    """One line of the audit log (``storage.audit``): who did what to which member's data,
    when and from which address. Append-only: no route edits or deletes a row; only the audit
    retention (``CITEWALL_AUDIT_RETENTION_DAYS``) trims rows older than its window.

    ``actor_user_id`` is deliberately not a foreign key: the line outlives the user.
    """

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    #: The admin's or member's user name, or ``cli`` / ``retention`` for work done on the host.
    actor: Mapped[str] = mapped_column(StringType(320))
    actor_user_id: Mapped[int | None] = mapped_column(Integer, default=None)
    #: How the actor came: ``bearer``, ``admin_proxy`` or ``cli``.
    via: Mapped[str] = mapped_column(String(16))
    action: Mapped[str] = mapped_column(String(64), index=True)
    #: What it was done to: ``conversation:<id>``, ``user:<id>``, ``report:<name>``...
    target: Mapped[str] = mapped_column(StringType(255))
    address: Mapped[str | None] = mapped_column(String(64), default=None)
    detail: Mapped[dict[str, Any]] = mapped_column(JSONType(), default=dict)

    def __repr__(self) -> str:
        return f"AuditEntry(id={self.id!r}, action={self.action!r}, target={self.target!r})"


class Erasure(Base):
    """One erasure request (``storage.erasure``), recorded before it is carried out so an
    interrupted one resumes; ``receipt`` says what was removed once it is ``done``.

    ``user_id`` is the erased user's id as it was (the row itself is gone once done).
    """

    __tablename__ = "erasures"
    __table_args__ = (CheckConstraint("status IN ('requested', 'done')", name="status"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(Integer, index=True)
    requested_by: Mapped[str] = mapped_column(StringType(320))
    requested_at: Mapped[datetime] = mapped_column(default=utcnow)
    status: Mapped[str] = mapped_column(String(16), default="requested")
    completed_at: Mapped[datetime | None] = mapped_column(default=None)
    receipt: Mapped[dict[str, Any]] = mapped_column(JSONType(), default=dict)

    def __repr__(self) -> str:
        return f"Erasure(id={self.id!r}, user_id={self.user_id!r}, status={self.status!r})"


class Lease(Base):
    """A named lease one process holds until ``expires_at`` (``storage.leases``): the one
    retention runner across replicas."""

    __tablename__ = "leases"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    holder: Mapped[str] = mapped_column(String(100))
    expires_at: Mapped[datetime] = mapped_column()

    def __repr__(self) -> str:
        return f"Lease(name={self.name!r}, holder={self.holder!r})"
