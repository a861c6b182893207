"""The body a helpdesk receives when a member asks for a person: ``HandoffPayload``.

Built from stored rows when the member asks (``build_payload``) and stored with the handoff,
so every delivery attempt sends the same document. Answers are member prose (no ``[n]``
markers); sources are the external ones a member saw, plus the internal cards the answer drew
on only when ``CITEWALL_HANDOFF_INCLUDE_INTERNAL`` is on: the helpdesk is staff, but another
system.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citewall.boundary.external import external_sources_only
from citewall.boundary.prose import prose_only
from citewall.storage.models import AnswerStatus, Conversation, Feedback, Message, Rating, User
from citewall.storage.sources import readable_sources

#: The payload's version; a change a receiver must know about gets a new one.
PAYLOAD_VERSION: Literal[1] = 1


class _Payload(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HandoffMember(_Payload):
    """Who asked: citewall's user id, their name, and their email when citewall knows it."""

    id: int
    name: str
    email: str | None = None


class HandoffSource(_Payload):
    """A card an answer cited: an external one with its public URL, or (only when internal
    sources are included) an internal one, without a URL."""

    card_id: str
    title: str
    url: str | None = None
    internal: bool = False


class HandoffTurn(_Payload):
    """One question and the answer it got (``answer`` None: it got none)."""

    question: str
    asked_at: datetime
    answer: str | None = None
    #: ``answered``, ``not_found`` (the knowledge base had nothing), ``stopped`` (the member
    #: stopped it) or ``other_language``.
    status: AnswerStatus | None = None
    #: The member's verdict on the answer: ``up`` helpful, ``down`` not helpful.
    rating: Rating | None = None
    rating_comment: str | None = None
    sources: list[HandoffSource] = Field(default_factory=list)


class HandoffPayload(_Payload):
    """What ``CITEWALL_HANDOFF_WEBHOOK_URL`` receives (docs/handoff.md has the schema)."""

    version: Literal[1] = PAYLOAD_VERSION
    #: The handoff's id: the same on every attempt, the receiver's key to drop a repeat.
    handoff_id: str
    conversation_id: str
    title: str
    requested_at: datetime
    #: What the member wrote when asking, if anything.
    message: str | None = None
    member: HandoffMember
    turns: list[HandoffTurn]
    #: The conversation in citewall's admin view.
    admin_url: str
    internal_sources_included: bool


def admin_conversation_url(public_url: str | None, conversation_id: str) -> str:
    """The admin view of a conversation, absolute when citewall's public URL is known.

    >>> admin_conversation_url("https://help.example.com", "c1")
    'https://help.example.com/admin/conversations/c1'
    >>> admin_conversation_url(None, "c1")
    '/admin/conversations/c1'
    """
    return f"{(public_url or '').rstrip('/')}/admin/conversations/{conversation_id}"


def _sources(message: Message, include_internal: bool) -> list[HandoffSource]:
    stored = readable_sources(message.sources)
    external = external_sources_only(stored, hybrid_path=message.hybrid_path)
    out = [HandoffSource(card_id=s.card_id, title=s.title, url=s.url) for s in external]
    if include_internal:
        shown = {s.card_id for s in external}
        seen: set[str] = set()
        for s in stored:
            if s.card_id in shown or s.card_id in seen:
                continue
            seen.add(s.card_id)
            out.append(HandoffSource(card_id=s.card_id, title=s.title, internal=True))
    return out


def conversation_turns(
    messages: Iterable[Message], ratings: Mapping[str, Feedback], *, include_internal: bool
) -> list[HandoffTurn]:
    """The conversation as question/answer pairs, in order: each answer with the question
    before it (a regenerated answer is a pair of its own, with the same question)."""
    turns: list[HandoffTurn] = []
    question: Message | None = None
    answered = False
    for message in messages:
        if message.role != "assistant":
            if question is not None and not answered:
                turns.append(HandoffTurn(question=question.content, asked_at=question.created_at))
            question, answered = message, False
            continue
        if question is None:
            continue
        rating = ratings.get(str(message.id))
        status = message.answer_status
        served = status if status in {"not_found", "stopped", "other_language"} else "answered"
        turns.append(
            HandoffTurn(
                question=question.content,
                asked_at=question.created_at,
                answer=prose_only(message.content),
                status=served,
                rating=rating.rating if rating is not None else None,
                rating_comment=rating.comment if rating is not None else None,
                sources=_sources(message, include_internal),
            )
        )
        answered = True
    if question is not None and not answered:
        turns.append(HandoffTurn(question=question.content, asked_at=question.created_at))
    return turns


def build_payload(
    *,
    handoff_id: str,
    conversation: Conversation,
    member: User,
    messages: Iterable[Message],
    ratings: Mapping[str, Feedback],
    message: str | None,
    requested_at: datetime,
    include_internal: bool,
    public_url: str | None,
) -> HandoffPayload:
    """The handoff document for ``conversation`` as it stands now."""
    return HandoffPayload(
        handoff_id=handoff_id,
        conversation_id=str(conversation.id),
        title=conversation.title,
        requested_at=requested_at,
        message=message,
        member=HandoffMember(id=member.id, name=member.name, email=member.email),
        turns=conversation_turns(messages, ratings, include_internal=include_internal),
        admin_url=admin_conversation_url(public_url, str(conversation.id)),
        internal_sources_included=include_internal,
    )
