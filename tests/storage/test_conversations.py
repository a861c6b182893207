"""Conversations and turns: atomic saves, sources kept exactly, ownership enforced."""

from __future__ import annotations

import json
import math
import uuid
from typing import Any

import pytest
from builders import add_conversation, retrieval_record, saved_turn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session
from testenv import examples

from citewall.errors import NotFoundError, StorageError
from citewall.retrieval.types import RetrievalRecord
from citewall.storage.conversations import (
    get_conversation,
    list_conversations,
    list_events,
    list_messages,
)
from citewall.storage.feedback import put_feedback
from citewall.storage.models import Conversation, Message, RetrievalEvent, new_uuid
from citewall.storage.schema import Database
from citewall.storage.sources import StoredSource, dump_sources
from citewall.storage.turns import NewConversation
from citewall.storage.users import create_user
from citewall.text.cleaning import encodable_json

SOURCES: list[dict[str, Any]] = [
    {
        "n": 2,
        "card_id": "billing-refunds",
        "title": "Refunds",
        "text": 'Refunds take 5 days. Ünïcödé ✓ "quoted" \\ back',
        "span": "Refunds take 5 days [2].",
        "source_url": "https://help.example/refunds?a=1&b=2",
        "source_license": "CC-BY-4.0",
        "retrieved_score": 87.0,
        "attributed": False,
        "metadata": {"url": "https://help.example/refunds", "z": 1, "a": [1, 2.5, None, True]},
    },
    {
        "n": 1,
        "card_id": "playbook-escalation",
        "title": "CWLEAKT-0001 escalation playbook",
        "text": "internal body CWLEAKB-0001",
        "span": None,
        "source_url": None,
        "source_license": None,
        "retrieved_score": None,
        "attributed": True,
        "metadata": {"author": "CWLEAKM-0001", "path": "/internal/x.md", "weights": [0.1, 1e-07]},
    },
]


def event(card_id: Any, rank: int, **extra: Any) -> RetrievalRecord:
    base: dict[str, Any] = {
        "dense_rank": rank,
        "dense_score": 0.5 / rank,
        "rrf_rank": rank,
        "rrf_score": 1 / (60 + rank),
        "rerank_rank": rank,
        "rerank_logit": 2.0 - rank,
        "hybrid_path": "full",
        "cited": rank <= 2,
        "is_external": card_id == "billing-refunds",
    }
    base.update(extra)
    return retrieval_record(card_id, rank, **base)


def turn(session: Session, conversation_id: str, **overrides: Any) -> tuple[Message, Message]:
    kwargs: dict[str, Any] = {
        "conversation_id": conversation_id,
        "question": "How long do refunds take?",
        "answer_content": "Refunds take 5 days [2]. Escalate early [1].",
        "sources": SOURCES,
        "hybrid_path": "full",
        "timings": {"retrieve_ms": 12.5, "generate_ms": 3.25},
        "generator": "extractive",
        "dropped_markers": 1,
        "events": [event("billing-refunds", 1), event("playbook-escalation", 2), event("c3", 3)],
    }
    kwargs.update(overrides)
    return saved_turn(session, **kwargs)


def typed(value: Any) -> Any:
    """A representation where 1, 1.0 and True differ (plain == treats them as equal)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


@pytest.fixture
def owner(session: Session) -> int:
    return create_user(session, "alice", "member")[0].id


def counts(db: Database) -> tuple[int, int]:
    with db.sessions() as s:
        return (
            int(s.scalar(select(func.count()).select_from(Message)) or 0),
            int(s.scalar(select(func.count()).select_from(RetrievalEvent)) or 0),
        )


def test_save_turn_writes_both_messages_and_the_events(db: Database, owner: int) -> None:
    conv_id = new_uuid()
    with db.sessions() as s:
        start = NewConversation(owner, "  Refunds   question ")
        user_msg, answer = turn(s, conv_id, new_conversation=start)
        before = get_conversation(s, conv_id, owner).updated_at
        turn(s, conv_id, question="again?")
    with db.sessions() as s:
        conv = get_conversation(s, conv_id, owner)
        assert conv.title == "Refunds question"
        messages = list_messages(s, conv.id)
        assert [(m.seq, m.role) for m in messages] == [
            (1, "user"),
            (2, "assistant"),
            (3, "user"),
            (4, "assistant"),
        ]
        assert messages[0].id == user_msg.id and messages[1].id == answer.id
        assert messages[0].content == "How long do refunds take?" and messages[0].sources == []
        assert messages[1].content.endswith("[1].")  # markers kept
        assert messages[1].hybrid_path == "full" and messages[1].generator == "extractive"
        assert messages[1].dropped_markers == 1
        assert messages[1].timings == {"retrieve_ms": 12.5, "generate_ms": 3.25}
        assert len(messages) == 4
        assert [c.message_count for c in list_conversations(s, owner)] == [4]
        events = list_events(s, answer.id)
        assert [(e.card_id, e.final_rank, e.cited) for e in events] == [
            ("billing-refunds", 1, True),
            ("playbook-escalation", 2, True),
            ("c3", 3, False),
        ]
        assert events[0].rerank_logit == 1.0 and events[0].rrf_score == 1 / 61
        assert all(e.conversation_id == conv.id for e in events)
        assert events[0].created_at == messages[1].created_at
        assert get_conversation(s, conv.id, owner).updated_at > before


def test_sources_come_back_exactly_as_given(db: Database, owner: int, backend: str) -> None:
    given = json.loads(json.dumps(SOURCES))  # an independent copy
    with db.sessions() as s:
        conv = add_conversation(s, owner, "t")
        _, answer = turn(s, conv.id, sources=given)
    with db.sessions() as s:
        reloaded = list_messages(s, conv.id)[1].sources
    assert reloaded == SOURCES
    assert typed(reloaded) == typed(SOURCES)  # no int/float/bool drift
    assert json.dumps(reloaded, sort_keys=True) == json.dumps(SOURCES, sort_keys=True)
    with db.engine.connect() as conn:
        raw = conn.execute(
            text("SELECT sources FROM messages WHERE id = :id"), {"id": answer.id}
        ).scalar_one()
    if backend == "sqlite":
        # SQLite keeps the very text written: key order and values untouched.
        assert raw == json.dumps(SOURCES, ensure_ascii=False)
        assert json.dumps(reloaded) == json.dumps(SOURCES)
    else:
        # JSONB normalises key order (documented); content is identical.
        assert raw == SOURCES


@pytest.mark.parametrize(
    "bad_events",
    [
        [event("a", 1), event("b", 2), event(None, 3)],  # NOT NULL violated on the 3rd row
        [event("a", 1, dense_score=math.nan)],  # SQLite would silently store NULL
        [event("a", 1, rerank_logit=math.inf)],
    ],
)
def test_a_failing_turn_leaves_no_partial_rows(
    db: Database, owner: int, bad_events: list[RetrievalRecord]
) -> None:
    with db.sessions() as s:
        conv = add_conversation(s, owner, "t")
        turn(s, conv.id)
        updated = get_conversation(s, conv.id, owner).updated_at
    before = counts(db)
    with db.sessions() as s, pytest.raises(StorageError, match="rolled back"):
        turn(s, conv.id, events=bad_events)
    assert counts(db) == before
    with db.sessions() as s:
        assert get_conversation(s, conv.id, owner).updated_at == updated
        # the session is usable again after the failure
        turn(s, conv.id)
    assert counts(db) == (before[0] + 2, before[1] + 3)


def test_unserialisable_sources_roll_back(db: Database, owner: int) -> None:
    with db.sessions() as s:
        conv = add_conversation(s, owner, "t")
    with db.sessions() as s, pytest.raises(StorageError):
        turn(s, conv.id, sources=[{"n": 1, "card_id": "a", "score": math.inf}])
    with db.sessions() as s, pytest.raises(StorageError, match="hybrid_path"):
        turn(s, conv.id, hybrid_path="bogus")
    with db.sessions() as s:  # a literal backslash-u sequence is fine
        turn(s, conv.id, sources=[{"n": 1, "card_id": "a", "text": "C:\\u0000"}], events=[])
    assert counts(db) == (2, 0)
    with db.sessions() as s:
        stored = list_messages(s, conv.id)[1].sources
        assert stored == [{"n": 1, "card_id": "a", "text": "C:\\u0000"}]


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("a\x00b", "ab"),  # NUL: PostgreSQL refuses it in text and JSONB
        ("void \ud800 label", "void \ufffd label"),  # a lone surrogate: no UTF-8 encoder takes it
        ("\udfff", "\ufffd"),
        ("pair \ud83d\ude00 joined", "pair \U0001f600 joined"),  # a pair written as two halves
    ],
)
def test_text_no_database_can_hold_is_stored_encodable_not_refused(
    db: Database, owner: int, written: str, stored: str
) -> None:
    with db.sessions() as s:
        conv = add_conversation(s, owner, f"title {written}")
        turn(
            s,
            conv.id,
            question=f"q {written}",
            answer_content=f"answer {written}",
            sources=[
                {"n": 1, "card_id": "a", "text": written, "metadata": {f"k{written}": [written]}}
            ],
            timings={f"t{written}": 1.0},
            generator=f"g{written}",
        )
    with db.sessions() as s:
        user_msg, assistant = list_messages(s, conv.id)
        assert s.get(Conversation, conv.id).title == f"title {stored}"  # type: ignore[union-attr]
    assert user_msg.content == f"q {stored}"
    assert assistant.content == f"answer {stored}"
    assert assistant.sources == [
        {"n": 1, "card_id": "a", "text": stored, "metadata": {f"k{stored}": [stored]}}
    ]
    assert assistant.timings == {f"t{stored}": 1.0}
    assert assistant.generator == f"g{stored}"


def test_turn_in_unknown_conversation_is_not_found(db: Database) -> None:
    with db.sessions() as s, pytest.raises(NotFoundError):
        turn(s, str(uuid.uuid4()))
    assert counts(db) == (0, 0)


def test_other_users_conversation_looks_exactly_like_a_missing_one(session: Session) -> None:
    alice = create_user(session, "alice", "member")[0].id
    bob = create_user(session, "bob", "member")[0].id
    conv = add_conversation(session, alice, "mine")
    assert get_conversation(session, conv.id, alice).id == conv.id
    assert get_conversation(session, conv.id, None).id == conv.id  # admin

    def message(conversation_id: str, user_id: int) -> str:
        with pytest.raises(NotFoundError) as info:
            get_conversation(session, conversation_id, user_id)
        return str(info.value).replace(repr(conversation_id), "<id>")

    foreign = message(conv.id, bob)
    assert foreign == message(str(uuid.uuid4()), bob)  # unknown id
    for malformed in ("nope", conv.id.upper(), conv.id + " ", "' OR 1=1 --", ""):
        assert message(malformed, bob) == foreign


def test_listing_is_per_user_newest_first(session: Session) -> None:
    alice = create_user(session, "alice", "member")[0].id
    bob = create_user(session, "bob", "member")[0].id
    first = add_conversation(session, alice, "first")
    add_conversation(session, alice, "second")
    add_conversation(session, bob, "bob's")
    turn(session, first.id)  # first is now the most recently updated
    listed = list_conversations(session, alice)
    assert [(c.title, c.message_count, c.user_id) for c in listed] == [
        ("first", 2, alice),
        ("second", 0, alice),
    ]
    assert [c.title for c in list_conversations(session, alice, limit=1, offset=1)] == ["second"]
    assert len(list_conversations(session, None)) == 3
    assert session.scalar(select(func.count()).select_from(Conversation)) == 3


def test_long_titles_are_shortened(session: Session) -> None:
    alice = create_user(session, "alice", "member")[0].id
    conv_id = new_uuid()
    turn(session, conv_id, new_conversation=NewConversation(alice, "word " * 100))
    title = get_conversation(session, conv_id, alice).title
    assert len(title) == 200 and title.endswith("…")


def test_a_failed_first_turn_leaves_no_conversation(db: Database, owner: int) -> None:
    conv_id = new_uuid()
    with db.sessions() as s, pytest.raises(StorageError, match="rolled back"):
        turn(
            s,
            conv_id,
            new_conversation=NewConversation(owner, "first"),
            events=[event(None, 1)],
        )
    with db.sessions() as s:
        assert list_conversations(s, owner) == []
    assert counts(db) == (0, 0)


def test_concurrent_turns_in_one_conversation_get_distinct_seqs(db: Database, owner: int) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with db.sessions() as s:
        conv = add_conversation(s, owner, "busy")

    def worker(_: int) -> None:
        for _ in range(3):
            with db.sessions() as s:
                turn(s, conv.id)

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(worker, range(4)))
    with db.sessions() as s:
        seqs = [m.seq for m in list_messages(s, conv.id)]
    assert seqs == list(range(1, 25))
    assert counts(db) == (24, 36)


# JSON values as a KB and the pipeline produce them, any text included (NUL, lone surrogates:
# stored encodable). Limit: PostgreSQL's JSONB prints floats of 1e16 and beyond without a
# decimal point (they would come back as ints), so those are outside what storage promises.
def _text(max_size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=st.characters(codec=None), max_size=max_size)


_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15)
    | _text(20)
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text(8), inner, max_size=3),
    max_leaves=12,
)
_source = st.fixed_dictionaries(
    {
        "n": st.integers(1, 20),
        "card_id": st.from_regex(r"[a-z0-9][a-z0-9._-]{0,15}", fullmatch=True),
    },
    optional={
        "title": _text(30),
        "metadata": st.dictionaries(_text(8), _json, max_size=4),
    },
)


@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sources=st.lists(_source, max_size=4))
def test_any_sources_round_trip_exactly(
    db: Database, owner: int, backend: str, sources: list[dict[str, Any]]
) -> None:
    with db.sessions() as s:
        conv = add_conversation(s, owner, "t")
        _, answer = turn(s, conv.id, sources=sources, events=[])
    with db.sessions() as s:
        reloaded = s.get(Message, answer.id).sources  # type: ignore[union-attr]
    # Exactly what was given, but for characters no database can hold (none, most of the time).
    expected = encodable_json(sources)
    assert typed(reloaded) == typed(expected)
    if backend == "sqlite":  # key order too: the stored source's fields in their order
        models = [StoredSource.model_validate(source) for source in sources]
        assert json.dumps(reloaded) == json.dumps(encodable_json(dump_sources(models)))


def test_a_listing_counts_not_found_answers_and_ratings(db: Database, owner: int) -> None:
    """What the admin list shows per conversation: answers not found, and the member's ratings."""
    quiet, busy = new_uuid(), new_uuid()
    with db.sessions() as s:
        turn(s, quiet, new_conversation=NewConversation(owner, "Quiet"))
        _, first = turn(s, busy, new_conversation=NewConversation(owner, "Busy"))
        _, missed = turn(s, busy, question="Ship to Mars?", answer_status="not_found")
        _, third = turn(s, busy, question="And Venus?", answer_status="not_found")
        for message, rating in ((first, "up"), (missed, "down"), (third, "down")):
            put_feedback(s, message_id=message.id, user_id=owner, rating=rating, comment=None)
    with db.sessions() as s:
        listed = {c.title: c for c in list_conversations(s, None)}
    assert (listed["Busy"].not_found_answers, listed["Busy"].rated_up) == (2, 1)
    assert listed["Busy"].rated_down == 2
    quiet_row = listed["Quiet"]
    assert (quiet_row.not_found_answers, quiet_row.rated_up, quiet_row.rated_down) == (0, 0, 0)
