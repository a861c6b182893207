"""Playbook versions: numbered 1..n without gaps whatever mix of saves and rollbacks came, a
rollback holds the restored version's fields, and a number taken twice is a conflict."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citewall.errors import ConflictError, NotFoundError
from citewall.kb.card import Card
from citewall.storage import card_versions, kb_sources
from citewall.storage.audit import AuditEvent
from citewall.storage.db import make_engine, make_session_factory
from citewall.storage.schema import migrate
from citewall.storage.types import utcnow

EVENT = AuditEvent(actor="ada", actor_user_id=1, via="cli", action="cards.change", target="t")

#: A step: save new text (None), or roll back to the version at this index of those saved.
STEPS = st.lists(
    st.one_of(st.none(), st.integers(min_value=0, max_value=50)), min_size=1, max_size=12
)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path_factory.mktemp('versions') / 'v.db'}"
    migrate(url)
    engine = make_engine(url)
    yield make_session_factory(engine)
    engine.dispose()


def _save(sessions, card: Card, restored_from: int | None, source_id: int):  # type: ignore[no-untyped-def]
    with sessions() as session:
        latest = card_versions.latest_number(session, card.id)
        return card_versions.record_version(
            session,
            card,
            number=card_versions.next_version([latest or 0]),
            author="ada",
            author_user_id=1,
            now=utcnow(),
            source_id=source_id,
            restored_from=restored_from,
            audit_event=EVENT,
        )


@settings(max_examples=25, deadline=None)
@given(steps=STEPS, n=st.integers(min_value=0, max_value=10**9))
def test_versions_are_contiguous_and_a_rollback_restores_the_fields(sessions, steps, n) -> None:  # type: ignore[no-untyped-def]
    card_id = f"pb-{n}-{len(steps)}-{abs(hash(tuple(steps))) % 10**6}"
    with sessions() as session:
        source = kb_sources.find_source(
            session, "playbooks", "admin pages"
        ) or kb_sources.add_source(session, "playbooks", "admin pages", now=utcnow())
    if card_versions.latest_number(sessions(), card_id) is not None:
        return  # the same id drawn twice: nothing new to check
    for i, step in enumerate(steps):
        with sessions() as session:
            have = card_versions.latest_number(session, card_id) or 0
        if step is None or have == 0:
            _save(sessions, Card(id=card_id, title=f"t{i}", body=f"body {i}"), None, source.id)
            continue
        target = step % have + 1
        with sessions() as session:
            earlier = card_versions.get_version(session, card_id, target)
        saved = _save(sessions, earlier.card(), target, source.id)
        assert (saved.title, saved.body, saved.restored_from) == (
            earlier.title,
            earlier.body,
            target,
        )
    with sessions() as session:
        numbers = [v.version for v in card_versions.versions(session, card_id)]
        listed = kb_sources.get_source(session, source.id).card_ids
    assert numbers == list(range(len(steps), 0, -1))
    assert card_id in listed


def test_a_number_taken_twice_is_a_conflict_and_a_missing_one_not_found(sessions) -> None:  # type: ignore[no-untyped-def]
    with sessions() as session:
        source = kb_sources.find_source(
            session, "playbooks", "admin pages"
        ) or kb_sources.add_source(session, "playbooks", "admin pages", now=utcnow())
    card = Card(id="pb-race", title="t", body="b")
    _save(sessions, card, None, source.id)
    with sessions() as session, pytest.raises(ConflictError, match="reload it"):
        card_versions.record_version(
            session,
            card,
            number=1,
            author="bob",
            author_user_id=2,
            now=utcnow(),
            source_id=source.id,
            restored_from=None,
            audit_event=EVENT,
        )
    with sessions() as session, pytest.raises(NotFoundError, match="versions 1 to 1"):
        card_versions.get_version(session, "pb-race", 4)


def test_next_version_counts_from_one() -> None:
    assert card_versions.next_version([]) == 1
    assert card_versions.next_version([3, 1, 2]) == 4
