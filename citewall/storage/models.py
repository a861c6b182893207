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
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSONType(), default=dict)
    content_hash: Mapped[str] = mapped_column(String(64))
    ingest_version: Mapped[int] = mapped_column(Integer, index=True)
    is_external: Mapped[bool] = mapped_column(Boolean, index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

    def __repr__(self) -> str:
        return f"CardRow(id={self.id!r}, ingest_version={self.ingest_version!r})"


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
