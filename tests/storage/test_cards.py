"""The card catalogue: hashes, upserts by content hash, listing and deletion."""

from __future__ import annotations

from sqlalchemy.orm import Session

from citewall.kb.card import Card
from citewall.storage.cards import (
    UpsertCounts,
    card_hashes,
    delete_cards,
    get_card,
    list_cards,
    next_ingest_version,
    upsert_cards,
)


def cards() -> list[Card]:
    return [
        Card(
            id="billing-refunds",
            title="Refunds",
            body="Refunds take 5 days.",
            url="https://help.example/refunds",
            license="CC-BY-4.0",
            metadata={"product": "billing", "tags": ["a", "b"]},
        ),
        Card(
            id="playbook-x",
            title="Escalation 100%_off",
            body="Internal body.",
            reply="We can help with that.",
            metadata={"author": "kim"},
        ),
        Card(
            id="setup", title="Setup", body="Install the thing.", url="https://help.example/setup"
        ),
    ]


def test_upsert_inserts_updates_and_skips_identical(session: Session) -> None:
    assert next_ingest_version(session) == 1
    assert upsert_cards(session, cards(), 1) == UpsertCounts(inserted=3)
    assert card_hashes(session) == {c.id: c.content_hash() for c in cards()}
    assert next_ingest_version(session) == 2

    changed = [*cards()[:2], cards()[2].model_copy(update={"body": "Install it twice."})]
    assert upsert_cards(session, changed, 2) == UpsertCounts(updated=1, unchanged=2)
    row = get_card(session, "setup")
    assert row is not None and row.body == "Install it twice." and row.ingest_version == 2
    assert row.updated_at > row.created_at
    assert get_card(session, "billing-refunds").ingest_version == 1  # type: ignore[union-attr]
    assert card_hashes(session)["setup"] == changed[2].content_hash()
    assert next_ingest_version(session) == 3

    new_reply = [cards()[1].model_copy(update={"reply": "We will look into it."})]
    assert upsert_cards(session, new_reply, 3) == UpsertCounts(updated=1)
    session.expire_all()
    assert get_card(session, "playbook-x").reply == "We will look into it."  # type: ignore[union-attr]


def test_rows_carry_every_card_field(session: Session) -> None:
    upsert_cards(session, cards(), 1)
    session.expire_all()
    refunds = get_card(session, "billing-refunds")
    assert refunds is not None
    assert (refunds.title, refunds.url, refunds.license) == (
        "Refunds",
        "https://help.example/refunds",
        "CC-BY-4.0",
    )
    assert refunds.meta == {"product": "billing", "tags": ["a", "b"]}
    assert refunds.is_external is True
    internal = get_card(session, "playbook-x")
    assert internal is not None and internal.is_external is False and internal.url is None
    assert (internal.reply, refunds.reply) == ("We can help with that.", None)
    assert get_card(session, "nope") is None


def test_list_cards_filters_and_counts(session: Session) -> None:
    upsert_cards(session, cards(), 1)
    rows, total = list_cards(session, None, None, 2, 0)
    # By title ("Escalation…", "Refunds", "Setup"), not by id.
    assert total == 3 and [r.id for r in rows] == ["playbook-x", "billing-refunds"]
    rows, total = list_cards(session, None, None, 2, 2)
    assert total == 3 and [r.id for r in rows] == ["setup"]
    assert [r.id for r in list_cards(session, None, True, 10, 0)[0]] == ["billing-refunds", "setup"]
    assert [r.id for r in list_cards(session, None, False, 10, 0)[0]] == ["playbook-x"]
    assert [r.id for r in list_cards(session, "INSTALL", None, 10, 0)[0]] == ["setup"]
    # LIKE wildcards in the query are literal characters
    assert [r.id for r in list_cards(session, "100%_", None, 10, 0)[0]] == ["playbook-x"]
    assert list_cards(session, "%", None, 10, 0)[1] == 1
    assert list_cards(session, "refund", False, 10, 0) == ([], 0)


def test_delete_cards(session: Session) -> None:
    upsert_cards(session, cards(), 1)
    assert delete_cards(session, ["setup", "setup", "missing"]) == 1
    assert set(card_hashes(session)) == {"billing-refunds", "playbook-x"}
