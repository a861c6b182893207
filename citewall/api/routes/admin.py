"""Admin routes: the card catalogue, everyone's conversations in full, analytics.

Admins see full data on purpose (ADR external-only: "operators keep full visibility"):
stored content with markers, every stored source, retrieval events.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from fastapi import APIRouter, Query

from citewall.api.deps import AdminUser, SessionDep
from citewall.api.responses import AUTHENTICATED, error_responses
from citewall.api.schemas import (
    MAX_OFFSET,
    AdminCard,
    AdminCardPage,
    AdminConversation,
    AdminConversationSummary,
    AdminMessage,
)
from citewall.api.storage_rows import (
    admin_sources,
    admin_timings,
    as_dict,
    conversation_events,
    conversation_summaries,
)
from citewall.errors import NotFoundError

router = APIRouter(
    prefix="/api/v1/admin", tags=["admin"], responses=error_responses(*AUTHENTICATED, 403, 404)
)

_CARD_FIELDS = {"id", "title", "url", "license", "body", "meta", "metadata", "is_external"}


def admin_card(row: Any) -> AdminCard:
    data = as_dict(row)
    meta = data.get("meta", data.get("metadata")) or {}
    return AdminCard(
        id=data["id"],
        title=data["title"],
        url=data.get("url"),
        license=data.get("license"),
        external=bool(data.get("is_external", data.get("url"))),
        body=data.get("body"),
        metadata=dict(meta),
        extra={k: v for k, v in data.items() if k not in _CARD_FIELDS},
    )


@router.get("/cards", response_model=AdminCardPage)
def list_cards(
    session: SessionDep,
    admin: AdminUser,
    q: str | None = Query(None, max_length=200, description="Substring of id or title"),
    external: bool | None = Query(None, description="Only external (true) or internal (false)"),
    limit: int = Query(50, ge=1, le=500),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
) -> Any:
    """The KB catalogue, internal cards included."""
    from citewall.storage import cards

    rows, total = cards.list_cards(session, q, external, limit, offset)
    return AdminCardPage(
        total=total, limit=limit, offset=offset, cards=[admin_card(r) for r in rows]
    )


@router.get("/cards/{card_id}", response_model=AdminCard)
def get_card(card_id: str, session: SessionDep, admin: AdminUser) -> Any:
    """One card in full (body and every metadata key)."""
    from citewall.storage import cards

    row = cards.get_card(session, card_id)
    if row is None:
        raise NotFoundError(f"card {card_id[:200]!r} not found")
    return admin_card(row)


@router.get("/conversations", response_model=list[AdminConversationSummary])
def list_all_conversations(
    session: SessionDep,
    admin: AdminUser,
    limit: int = Query(50, ge=1, le=500),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
) -> Any:
    """Every user's conversations, most recently updated first."""
    return [
        AdminConversationSummary(**vars_of(s))
        for s in conversation_summaries(session, None, limit, offset)
    ]


def vars_of(summary: Any) -> dict[str, Any]:
    return {
        **{f: getattr(summary, f) for f in AdminConversationSummary.model_fields},
        "user_id": str(summary.user_id),
    }


@router.get("/conversations/{conversation_id}", response_model=AdminConversation)
def get_any_conversation(conversation_id: str, session: SessionDep, admin: AdminUser) -> Any:
    """A conversation as stored: content with markers, every source, retrieval events."""
    from citewall.storage import conversations

    conv = conversations.get_conversation(session, conversation_id, None)
    messages = conversations.list_messages(session, conv.id)
    return AdminConversation(
        id=str(conv.id),
        user_id=str(conv.user_id),
        title=conv.title,
        created_at=conv.created_at,
        updated_at=conv.updated_at,
        messages=[
            AdminMessage(
                id=str(m.id),
                seq=m.seq,
                role=m.role,
                content=m.content,
                sources=admin_sources(m.sources),
                hybrid_path=m.hybrid_path,
                timings=admin_timings(m.timings),
                generator=m.generator,
                dropped_markers=m.dropped_markers,
                created_at=m.created_at,
            )
            for m in messages
        ],
        retrieval_events=conversation_events(session, messages),
    )


@router.get("/analytics/entry-performance", response_model=list[dict[str, Any]])
def entry_performance(
    session: SessionDep,
    admin: AdminUser,
    period: Literal["day", "week", "month", "all"] = Query("all"),
    since: datetime | None = Query(None),
    until: datetime | None = Query(None),
    card_id: str | None = Query(None, max_length=200),
) -> Any:
    """Per card and period: times retrieved, times cited, cite rate, mean rank, last cited."""
    from citewall.storage import analytics

    rows = analytics.entry_performance(
        session, period=period, since=since, until=until, card_id=card_id
    )
    return [as_dict(r) for r in rows]


@router.get("/analytics/retrieval-events", response_model=list[dict[str, Any]])
def retrieval_events(
    session: SessionDep,
    admin: AdminUser,
    card_id: str | None = Query(None, max_length=200),
    hybrid_path: Literal["full", "rrf_only", "dense_only", "none"] | None = Query(
        None, description="'none' selects turns where nothing was retrieved"
    ),
    since: datetime | None = Query(None),
    until: datetime | None = Query(None),
    cited: bool | None = Query(None),
    limit: int = Query(100, ge=1, le=1000),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
) -> Any:
    """The retrieval-event log (one row per retrieved card per turn), newest first."""
    from citewall.storage import analytics

    rows = analytics.retrieval_events(
        session,
        card_id=card_id,
        hybrid_path=hybrid_path,
        since=since,
        until=until,
        cited=cited,
        limit=limit,
        offset=offset,
    )
    return [as_dict(r) for r in rows]
