"""Exposure reservations: the internal cards of a turn's context, held against its member's
exposure budget from before the answer is generated until the turn is stored
(docs/distillation.md, "The budget guarantee").

``reserve_exposure`` is the one place the budget is decided. In one short transaction holding
the member's lock (a ``FOR NO KEY UPDATE`` lock on their ``users`` row on PostgreSQL, which
every replica sharing the database respects; the database's write lock, ``BEGIN IMMEDIATE``,
on SQLite) it counts the distinct internal cards of the member's exposure rows and unsettled
reservations in the window, and, unless that reaches the budget, reserves the turn's cards.
Two turns of one member that run at the same moment therefore take turns: the second counts
the first one's cards. ``save_turn`` settles a turn's reservations (deletes them in the
transaction that writes its exposure rows); ``release_exposure`` drops those of a turn that
showed nothing from the knowledge base. A turn never stored keeps its reservations, which count
until they leave the window: the budget fails closed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, distinct, func, select, union
from sqlalchemy.orm import Session

from citewall.storage.db import begin_write
from citewall.storage.exposure.rows import restricted_since
from citewall.storage.failures import storage_errors
from citewall.storage.models import Exposure, ExposureReservation, User


@dataclass(frozen=True, slots=True)
class BudgetDecision:
    """What the locked read decided for one turn."""

    #: Distinct internal cards counted in the window before this turn (exposed or reserved).
    counted: int
    #: The budget was spent: the turn answers from external cards only, nothing was reserved.
    spent: bool
    #: ``spent``, and no answer of the window was restricted yet: the admin alert.
    first_restricted: bool
    #: The cards reserved for the turn (empty when ``spent``).
    reserved: tuple[str, ...]


def counted_cards(session: Session, user_id: int, since: datetime) -> int:
    """Distinct internal cards of ``user_id``'s exposure rows and reservations at or after
    ``since``: what the budget is compared with."""
    held = union(
        select(Exposure.card_id).where(Exposure.user_id == user_id, Exposure.created_at >= since),
        select(ExposureReservation.card_id).where(
            ExposureReservation.user_id == user_id, ExposureReservation.created_at >= since
        ),
    ).subquery()
    return int(session.scalar(select(func.count(distinct(held.c.card_id)))) or 0)


def reserve_exposure(
    session: Session,
    *,
    user_id: int,
    reservation: str,
    cards: Sequence[str],
    budget_cards: int,
    since: datetime,
    now: datetime,
) -> BudgetDecision:
    """Decide the budget for one turn whose context holds the internal ``cards`` and, unless
    it is spent (``budget_cards`` distinct cards counted since ``since``), reserve them under
    the key ``reservation``; committed. ``StorageError`` when the database fails (then nothing
    is reserved and the turn must not answer from internal cards).

    Without ``cards`` there is nothing to reserve: the count is read without the lock.
    """
    with storage_errors(session, "reserving the member's exposure budget"):
        if cards:
            begin_write(session)
            # Every turn of this member, on every replica, waits here for the one before it.
            session.execute(
                select(User.id).where(User.id == user_id).with_for_update(key_share=True)
            )
        counted = counted_cards(session, user_id, since)
        if counted >= budget_cards:
            first = not restricted_since(session, user_id, since)
            session.commit()
            return BudgetDecision(counted, True, first, ())
        reserved = tuple(dict.fromkeys(cards))
        session.add_all(
            ExposureReservation(
                user_id=user_id, reservation=reservation, card_id=card, created_at=now
            )
            for card in reserved
        )
        session.commit()
    return BudgetDecision(counted, False, False, reserved)


def settle_reservation(session: Session, reservation: str) -> None:
    """Delete the rows of ``reservation`` in the caller's transaction (``save_turn``: the turn's
    exposure rows replace them)."""
    session.execute(
        delete(ExposureReservation).where(ExposureReservation.reservation == reservation)
    )


def release_exposure(session: Session, reservation: str) -> None:
    """Drop the reservation of a turn that showed nothing from the knowledge base; committed."""
    with storage_errors(session, "releasing an exposure reservation"):
        settle_reservation(session, reservation)
        session.commit()
