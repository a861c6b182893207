"""What the workspace stored about a member's answers, as an admin would read it.

The stored assistant messages (whether the turn was restricted, the cited sources, internal
included) and the member's ``exposures`` rows, read from the workspace's database. The
benchmark never trusts what the attacker saw for these: they are the server's own record.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from citewall.storage.models import Conversation, Exposure, Message


@dataclass(frozen=True, slots=True)
class StoredAnswer:
    """One stored assistant message of the member."""

    message_id: str
    restricted: str | None
    #: Card ids of the stored sources (every cited card, internal included).
    cited: frozenset[str]
    #: Card ids of the exposure rows written with the turn (internal cards cited or copied).
    exposed: frozenset[str]

    def touched(self, internal_ids: frozenset[str]) -> frozenset[str]:
        """The cards of ``internal_ids`` this answer drew on: exposed, or cited."""
        return (self.exposed | self.cited) & internal_ids


def stored_answers(session_factory: sessionmaker[Session], user_id: int) -> dict[str, StoredAnswer]:
    """Message id -> the stored assistant message, for every answer ``user_id`` received."""
    with session_factory() as session:
        messages = session.execute(
            select(Message.id, Message.restricted, Message.sources)
            .join(Conversation, Conversation.id == Message.conversation_id)
            .where(Conversation.user_id == user_id, Message.role == "assistant")
        ).all()
        rows = session.execute(
            select(Exposure.message_id, Exposure.card_id).where(Exposure.user_id == user_id)
        ).all()
    exposed: dict[str, set[str]] = defaultdict(set)
    for message_id, card_id in rows:
        exposed[str(message_id)].add(str(card_id))
    return {
        str(mid): StoredAnswer(
            message_id=str(mid),
            restricted=restricted,
            cited=frozenset(str(s.get("card_id", "")) for s in sources or () if s.get("card_id")),
            exposed=frozenset(exposed.get(str(mid), ())),
        )
        for mid, restricted, sources in messages
    }
