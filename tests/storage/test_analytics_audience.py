"""Entry performance by audience, on both databases: ``audience=G`` counts only the
conversations of the members whose groups include G (their groups now, as the knowledge-gaps
report does), and every row names the card's audiences in the catalogue."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from builders import add_conversation
from sqlalchemy.orm import Session

from citewall.kb.card import Card
from citewall.storage.analytics import entry_performance
from citewall.storage.cards import upsert_cards
from citewall.storage.feedback import put_feedback
from citewall.storage.users import create_user, set_groups

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def counts(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int, int, int, list[str]]]:
    """card -> (retrieved, cited, helpful, unhelpful, audiences)."""
    return {
        r["card_id"]: (
            r["times_retrieved"],
            r["times_cited"],
            r["helpful"],
            r["unhelpful"],
            r["audiences"],
        )
        for r in rows
    }


def test_entry_performance_narrows_to_the_members_of_one_audience(
    session: Session, record: Callable[..., str]
) -> None:
    upsert_cards(
        session,
        [
            Card(id="ent", title="SSO", body="saml", audiences=("enterprise",)),
            Card(id="open", title="Refunds", body="refund"),
        ],
        1,
    )
    ent_user, _ = create_user(session, "ent-member", "member", ["enterprise", "beta"])
    basic_user, _ = create_user(session, "basic-member", "member")
    ent_turn = record(
        session,
        AT,
        [("ent", False), ("open", False)],
        ["ent"],
        conversation_id=add_conversation(session, ent_user.id).id,
    )
    basic_turn = record(
        session,
        AT,
        [("open", False)],
        ["open"],
        conversation_id=add_conversation(session, basic_user.id).id,
    )
    put_feedback(session, message_id=ent_turn, user_id=ent_user.id, rating="up", comment=None)
    put_feedback(session, message_id=basic_turn, user_id=basic_user.id, rating="down", comment=None)
    session.commit()

    assert counts(entry_performance(session)) == {
        "ent": (1, 1, 1, 0, ["enterprise"]),
        "open": (2, 1, 0, 1, []),
    }
    enterprise = counts(entry_performance(session, audience="enterprise"))
    assert enterprise == {"ent": (1, 1, 1, 0, ["enterprise"]), "open": (1, 0, 0, 0, [])}
    assert counts(entry_performance(session, audience="beta")) == enterprise
    assert entry_performance(session, audience="partners") == []
    by_week = entry_performance(session, audience="enterprise", period="week")
    assert [(r["card_id"], r["period_start"]) for r in by_week] == [
        ("ent", "2026-03-02"),
        ("open", "2026-03-02"),
    ]

    # Groups now: the member who leaves beta takes their past activity out of beta's figures.
    set_groups(session, "ent-member", ["enterprise"])
    assert entry_performance(session, audience="beta") == []
