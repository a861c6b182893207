"""Limits answer clear 4xx errors naming the limit: message length (413), blank message (422),
conversation length (409), per-member rate (429 + Retry-After), unknown conversation (404)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from citewall.api.limits import RateLimitedError, SlidingWindowLimiter
from citewall.storage.models import User
from citewall.storage.users import add_token

from .conftest import INTERNAL_QUESTIONS, ApiEnv


def test_too_long_message_is_413_naming_the_limit(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    limit = env.runtime.settings.max_message_chars
    for path in ("/api/v1/chat", "/api/v1/chat/stream"):
        r = env.client.post(path, json={"message": "a" * (limit + 1)}, headers=env.auth("member"))
        assert r.status_code == 413, r.text
        assert str(limit) in r.json()["detail"]
        assert "CITEWALL_MAX_MESSAGE_CHARS" in r.json()["detail"]


@pytest.mark.parametrize("body", [{"message": ""}, {"message": "   \n\t"}, {}, {"message": 5}])
def test_blank_or_missing_message_is_422_without_echo(
    env_sqlite: ApiEnv, body: dict[str, object]
) -> None:
    env = env_sqlite
    r = env.client.post("/api/v1/chat", json=body, headers=env.auth("member"))
    assert r.status_code == 422, r.text
    problems = r.json()["detail"]
    # loc, msg and an error code (type): never the input itself
    assert problems and all(set(p) == {"loc", "msg", "type"} for p in problems)
    assert all("input" not in p for p in problems)
    assert any("message" in p["loc"] for p in problems)


def test_unknown_conversation_is_404(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    for cid in (str(uuid.uuid4()), "not-a-uuid"):
        r = env.chat("member", "hello", cid)
        assert r.status_code == 404, r.text
        s = env.client.post(
            "/api/v1/chat/stream",
            json={"message": "hello", "conversation_id": cid},
            headers=env.auth("member"),
        )
        assert s.status_code == 404 and s.headers["content-type"].startswith("application/json")


@pytest.fixture
def small_conversations(env_sqlite: ApiEnv) -> Iterator[int]:
    settings = env_sqlite.runtime.settings
    old = settings.max_conversation_messages
    settings.max_conversation_messages = 4
    yield 4
    settings.max_conversation_messages = old


def test_full_conversation_is_409(env_sqlite: ApiEnv, small_conversations: int) -> None:
    env = env_sqlite
    cid = env.chat("member", INTERNAL_QUESTIONS[0]).json()["conversation_id"]
    assert env.chat("member", INTERNAL_QUESTIONS[1], cid).status_code == 200  # 4 messages now
    r = env.chat("member", INTERNAL_QUESTIONS[2], cid)
    assert r.status_code == 409, r.text
    assert "4" in r.json()["detail"] and "new conversation" in r.json()["detail"]
    listing = env.client.get("/api/v1/conversations", headers=env.auth("member")).json()
    assert next(c for c in listing if c["id"] == cid)["message_count"] == 4


def test_rate_limit_is_429_with_retry_after_per_member(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    with env.runtime.session_factory() as session:
        member = session.get(User, env.user_ids["member"])
        assert member is not None
        second_token = add_token(session, member)
        session.commit()
    old = env.app.state.limiter
    env.app.state.limiter = SlidingWindowLimiter(3)
    try:
        for _ in range(2):
            assert env.client.get("/api/v1/me", headers=env.auth("member")).status_code == 200
        # The member's second token shares the member's window.
        second = {"Authorization": f"Bearer {second_token}"}
        assert env.client.get("/api/v1/me", headers=second).status_code == 200
        r = env.client.get("/api/v1/me", headers=env.auth("member"))
        assert r.status_code == 429, r.text
        assert 1 <= int(r.headers["retry-after"]) <= 60
        assert "3 requests per minute" in r.json()["detail"]
        assert env.client.get("/api/v1/me", headers=second).status_code == 429
        # Another member has their own window.
        assert env.client.get("/api/v1/me", headers=env.auth("other")).status_code == 200
    finally:
        env.app.state.limiter = old


def test_sliding_window_frees_slots_as_time_passes() -> None:
    now = [1000.0]
    limiter = SlidingWindowLimiter(2, window_s=60, clock=lambda: now[0])
    limiter.hit("k")
    now[0] += 30
    limiter.hit("k")
    with pytest.raises(RateLimitedError) as err:
        limiter.hit("k")
    assert err.value.retry_after_s == 30
    now[0] += 30.5  # the first hit has left the window
    limiter.hit("k")
    assert SlidingWindowLimiter(0).hit("k") is None  # 0 disables


def test_a_huge_body_is_refused_413_before_parsing(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    huge = '{"message": "' + "a" * 2_000_000 + '"}'
    r = env.client.post(
        "/api/v1/chat",
        content=huge,
        headers={**env.auth("member"), "Content-Type": "application/json"},
    )
    assert r.status_code == 413, r.text[:200]
    assert r.headers["x-content-type-options"] == "nosniff"
    assert len(r.text) < 1000  # nothing echoed


def test_a_huge_chunked_body_is_refused_too(env_sqlite: ApiEnv) -> None:
    env = env_sqlite

    def chunks() -> Iterator[bytes]:
        yield b'{"message": "'
        for _ in range(200):
            yield b"a" * 10_000
        yield b'"}'

    r = env.client.post(
        "/api/v1/chat",
        content=chunks(),
        headers={**env.auth("member"), "Content-Type": "application/json"},
    )
    assert r.status_code == 413, r.text[:200]
    assert "CITEWALL_MAX_MESSAGE_CHARS" in r.json()["detail"]
