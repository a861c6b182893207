"""Members signed in by the host site: a host token becomes a session (201), the session is a
bearer token that expires on the runtime's clock, ends at sign-out and with ``users revoke``;
a host token signs in once (by its jti, or without one by its signed part), even when sent
in parallel; one user per (issuer, subject), even for concurrent first sign-ins; key rotation
needs one JWKS refetch; HS256 with a shared secret; what the server offers. SQLite and
PostgreSQL."""

from __future__ import annotations

import re
import threading
from datetime import datetime, timedelta

import jwt
import pytest
from jwks_host import JwksHost, SigningKey, claims, sign, twin_es256
from pydantic import SecretStr
from sqlalchemy import func, select

from citewall.storage.models import ApiToken, User
from citewall.storage.types import utcnow
from citewall.storage.users import external_user_name, revoke_user

from .conftest import MEMBER_AUDIENCE, MEMBER_ISSUER, ApiEnv, client_with, sign_in_count

Keys = dict[str, SigningKey]
SESSION = "/api/v1/auth/session"
GENERIC = {"detail": "the sign-in token was not accepted"}


def host_token(keys: Keys, subject: str, key: str = "rsa", **extra: object) -> str:
    return sign(keys[key], claims(MEMBER_ISSUER, MEMBER_AUDIENCE, subject, **extra))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def users_with(env: ApiEnv, subject: str) -> list[User]:
    with env.runtime.session_factory() as session:
        return list(session.scalars(select(User).where(User.subject == subject)))


@pytest.mark.parametrize("key", ["rsa", "ec"])
def test_a_host_token_becomes_a_session_that_works_on_member_routes(
    env_sign_in: ApiEnv, signing_keys: Keys, key: str
) -> None:
    env = env_sign_in
    before = sign_in_count(env, "member", "ok")
    subject = f"pat-{key}"
    r = env.client.post(
        SESSION, json={"token": host_token(signing_keys, subject, key, email="pat@host.test")}
    )
    assert r.status_code == 201, r.text
    body = r.json()
    assert set(body) == {"token", "expires_at", "name", "role", "regenerate_varies", "handoff"}
    assert body["regenerate_varies"] is False  # the extractive generator answers alike
    assert body["handoff"] is False  # no helpdesk configured
    assert re.fullmatch(r"cw_[A-Za-z0-9_-]{40}", body["token"]) and body["role"] == "member"
    assert body["name"] == external_user_name("pat@host.test", MEMBER_ISSUER, subject)
    ttl = datetime.fromisoformat(body["expires_at"]) - utcnow()
    assert timedelta(minutes=59) < ttl <= timedelta(hours=1)  # CITEWALL_SESSION_TTL_S
    me = env.client.get("/api/v1/me", headers=bearer(body["token"]))
    assert me.json() == {
        "name": body["name"],
        "role": "member",
        "session": True,
        "regenerate_varies": False,
        "handoff": False,
    }
    chat = env.client.post(
        "/api/v1/chat", json={"message": "How long do refunds take?"}, headers=bearer(body["token"])
    )
    assert chat.status_code == 200, chat.text
    (user,) = users_with(env, subject)
    assert (user.issuer, user.email, user.role) == (MEMBER_ISSUER, "pat@host.test", "member")
    assert sign_in_count(env, "member", "ok") == before + 1


def test_two_sign_ins_of_one_member_are_one_user(env_sign_in: ApiEnv, signing_keys: Keys) -> None:
    env = env_sign_in
    first = env.client.post(SESSION, json={"token": host_token(signing_keys, "twice")}).json()
    second = env.client.post(
        SESSION, json={"token": host_token(signing_keys, "twice", "ec", name="Renamed")}
    ).json()
    assert first["name"] == second["name"] and first["token"] != second["token"]
    assert len(users_with(env, "twice")) == 1


def in_parallel(env: ApiEnv, tokens: list[str]) -> list[int]:
    """The statuses of exchanging ``tokens`` at once, one thread each."""
    barrier = threading.Barrier(len(tokens))
    statuses: list[int] = []

    def sign_in(token: str) -> None:
        barrier.wait(timeout=10)
        statuses.append(env.client.post(SESSION, json={"token": token}).status_code)

    threads = [threading.Thread(target=sign_in, args=(token,)) for token in tokens]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return statuses


def sessions_of(env: ApiEnv, subject: str) -> int:
    (user,) = users_with(env, subject)
    with env.runtime.session_factory() as session:
        count = select(func.count()).select_from(ApiToken).where(ApiToken.user_id == user.id)
        return int(session.scalar(count) or 0)


def test_concurrent_first_sign_ins_make_one_user(env_sign_in: ApiEnv, signing_keys: Keys) -> None:
    env = env_sign_in
    statuses = in_parallel(env, [host_token(signing_keys, "crowd") for _ in range(6)])
    assert statuses == [201] * 6
    assert len(users_with(env, "crowd")) == 1


def test_a_host_token_signs_in_once(
    env_sign_in: ApiEnv, signing_keys: Keys, caplog: pytest.LogCaptureFixture
) -> None:
    """Sign-out ends the session; the host token it came from cannot open another one."""
    env = env_sign_in
    token = host_token(signing_keys, "once")
    first = env.client.post(SESSION, json={"token": token})
    assert first.status_code == 201, first.text
    assert env.client.delete(SESSION, headers=bearer(first.json()["token"])).status_code == 204
    before = sign_in_count(env, "member", "replayed")
    caplog.set_level("WARNING", logger="citewall.auth")
    again = env.client.post(SESSION, json={"token": token})
    assert again.status_code == 401 and again.json() == GENERIC
    assert "member sign-in refused: replayed:" in caplog.text and token not in caplog.text
    assert sign_in_count(env, "member", "replayed") == before + 1
    assert sessions_of(env, "once") == 1
    # A fresh token of the same member signs in; another token reusing a jti does not.
    fresh = host_token(signing_keys, "once", jti="host-jti-1")
    assert env.client.post(SESSION, json={"token": fresh}).status_code == 201
    reused = host_token(signing_keys, "once", "ec", jti="host-jti-1")
    assert env.client.post(SESSION, json={"token": reused}).status_code == 401
    assert sign_in_count(env, "member", "replayed") == before + 2


@pytest.mark.parametrize("key", ["rsa", "ec"])
def test_a_token_without_jti_signs_in_once_by_its_signed_part(
    env_sign_in: ApiEnv, signing_keys: Keys, key: str
) -> None:
    """Without a jti the token is remembered by its signed header and payload, not its whole
    text: an ES256 signature has a twin (r, n - s) that verifies too, so a replay of the same
    token under another spelling is refused as well."""
    env = env_sign_in
    subject = f"no-jti-{key}"
    token = host_token(signing_keys, subject, key, jti=None)
    assert "jti" not in jwt.decode(token, options={"verify_signature": False})
    before = sign_in_count(env, "member", "replayed")
    assert env.client.post(SESSION, json={"token": token}).status_code == 201
    assert env.client.post(SESSION, json={"token": token}).status_code == 401
    replays = 1
    if key == "ec":
        twin = twin_es256(token)
        assert twin != token
        assert env.client.post(SESSION, json={"token": twin}).status_code == 401
        replays += 1
    assert sign_in_count(env, "member", "replayed") == before + replays
    assert sessions_of(env, subject) == 1


def test_parallel_exchanges_of_one_token_make_one_session(
    env_sign_in: ApiEnv, signing_keys: Keys
) -> None:
    env = env_sign_in
    statuses = in_parallel(env, [host_token(signing_keys, "racer")] * 6)
    assert sorted(statuses) == [201] + [401] * 5
    assert sessions_of(env, "racer") == 1


def test_a_session_ends_on_the_runtime_clock(env_sign_in: ApiEnv, signing_keys: Keys) -> None:
    runtime, client = client_with(env_sign_in, session_ttl_s=600)
    start = utcnow()
    runtime.clock = lambda: start
    body = client.post(SESSION, json={"token": host_token(signing_keys, "clocked")}).json()
    assert datetime.fromisoformat(body["expires_at"]) == start + timedelta(seconds=600)
    runtime.clock = lambda: start + timedelta(seconds=599)
    assert client.get("/api/v1/me", headers=bearer(body["token"])).status_code == 200
    runtime.clock = lambda: start + timedelta(seconds=600)
    r = client.get("/api/v1/me", headers=bearer(body["token"]))
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert client.delete(SESSION, headers=bearer(body["token"])).status_code == 401


def test_sign_out_revokes_the_session_and_refuses_an_api_token(
    env_sign_in: ApiEnv, signing_keys: Keys
) -> None:
    env = env_sign_in
    body = env.client.post(SESSION, json={"token": host_token(signing_keys, "leaver")}).json()
    other = env.client.post(SESSION, json={"token": host_token(signing_keys, "leaver")}).json()
    assert env.client.delete(SESSION, headers=bearer(body["token"])).status_code == 204
    assert env.client.get("/api/v1/me", headers=bearer(body["token"])).status_code == 401
    assert env.client.get("/api/v1/me", headers=bearer(other["token"])).status_code == 200
    assert env.client.delete(SESSION, headers=bearer(body["token"])).status_code == 401
    assert env.client.delete(SESSION).status_code == 401
    api = env.client.delete(SESSION, headers=env.auth("member"))
    assert api.status_code == 400
    assert api.json() == {"detail": "not a session; revoke API tokens with citewall users revoke"}
    # The page learns which it holds, so its sign-out sends no request that would fail.
    me = env.client.get("/api/v1/me", headers=env.auth("member"))
    assert me.status_code == 200 and me.json()["session"] is False


def test_users_revoke_ends_sessions_and_a_disabled_member_gets_none(
    env_sign_in: ApiEnv, signing_keys: Keys, caplog: pytest.LogCaptureFixture
) -> None:
    env = env_sign_in
    body = env.client.post(SESSION, json={"token": host_token(signing_keys, "banned")}).json()
    with env.runtime.session_factory() as session:
        revoke_user(session, body["name"])  # what `citewall users revoke NAME` runs
    assert env.client.get("/api/v1/me", headers=bearer(body["token"])).status_code == 401
    before = sign_in_count(env, "member", "disabled")
    caplog.set_level("WARNING", logger="citewall.auth")
    again = env.client.post(SESSION, json={"token": host_token(signing_keys, "banned")})
    assert again.status_code == 401 and again.json() == GENERIC
    assert "member sign-in refused: disabled:" in caplog.text
    assert sign_in_count(env, "member", "disabled") == before + 1


def test_a_rotated_key_is_accepted_after_one_refetch(
    env_sign_in: ApiEnv, jwks_host: JwksHost, signing_keys: Keys
) -> None:
    path = f"rotating-{env_sign_in.extra['jwks_tag']}"
    jwks_host.jwks[path] = [signing_keys["rsa"]]
    runtime, client = client_with(env_sign_in, member_jwks_url=jwks_host.url(path))
    start = utcnow()
    runtime.clock = lambda: start
    assert client.post(SESSION, json={"token": host_token(signing_keys, "rot")}).status_code == 201
    jwks_host.jwks[path] = [signing_keys["rotated"]]  # new kid served, old one removed
    new_key_token = host_token(signing_keys, "rot", "rotated")
    # Within 10 s of the last fetch the JWKS is not fetched again, whatever kid is named.
    assert client.post(SESSION, json={"token": new_key_token}).status_code == 401
    fetched = jwks_host.fetches[path]
    runtime.clock = lambda: start + timedelta(seconds=11)
    assert client.post(SESSION, json={"token": new_key_token}).status_code == 201
    assert jwks_host.fetches[path] == fetched + 1
    old = client.post(SESSION, json={"token": host_token(signing_keys, "rot")})
    assert old.status_code == 401 and jwks_host.fetches[path] == fetched + 1


def test_hs256_with_a_shared_secret(env_sign_in: ApiEnv, signing_keys: Keys) -> None:
    secret = "a shared secret of at least 32 bytes!"
    _, client = client_with(env_sign_in, member_jwks_url=None, member_jwt_secret=SecretStr(secret))
    payload = claims(MEMBER_ISSUER, MEMBER_AUDIENCE, "hs-member")
    good = client.post(SESSION, json={"token": jwt.encode(payload, secret, algorithm="HS256")})
    assert good.status_code == 201, good.text
    wrong = jwt.encode(payload, secret + "?", algorithm="HS256")
    assert client.post(SESSION, json={"token": wrong}).status_code == 401
    rs = client.post(SESSION, json={"token": host_token(signing_keys, "hs-member")})
    assert rs.status_code == 401 and rs.json() == GENERIC


def test_sign_in_is_rate_limited_per_member_after_it_succeeds(
    env_sign_in: ApiEnv, signing_keys: Keys
) -> None:
    _, client = client_with(env_sign_in, rate_limit_per_minute=2)
    for _ in range(2):
        ok = client.post(SESSION, json={"token": host_token(signing_keys, "eager")})
        assert ok.status_code == 201
    limited = client.post(SESSION, json={"token": host_token(signing_keys, "eager")})
    assert limited.status_code == 429 and "retry-after" in limited.headers
    other = client.post(SESSION, json={"token": host_token(signing_keys, "calm")})
    assert other.status_code == 201
    (user,) = users_with(env_sign_in, "eager")
    with env_sign_in.runtime.session_factory() as session:
        count = select(func.count()).select_from(ApiToken).where(ApiToken.user_id == user.id)
        assert session.scalar(count) == 2  # the refused sign-in wrote no session


def test_what_the_server_offers(env_sign_in: ApiEnv) -> None:
    config = env_sign_in.client.get("/api/v1/auth/config")
    assert config.json() == {"host_sign_in": True, "admin_proxy": True}
    _, plain = client_with(env_sign_in, member_jwks_url=None, admin_proxy_jwks_url=None)
    assert plain.get("/api/v1/auth/config").json() == {"host_sign_in": False, "admin_proxy": False}
    r = plain.post(SESSION, json={"token": "anything"})
    assert r.status_code == 404
    assert r.json() == {"detail": "sign-in with a host token is not configured"}


def test_the_session_says_whether_a_person_can_be_asked_as_me_does(
    env_sign_in: ApiEnv, signing_keys: Keys
) -> None:
    """The embedded chat knows only its session response: it must carry ``handoff`` as
    ``/me`` does, so the embed offers "Talk to a person" exactly when the member chat does."""
    env = env_sign_in
    _, client = client_with(
        env,
        handoff_webhook_url="http://127.0.0.1:9/hook",
        handoff_webhook_secret=SecretStr("handoff-secret-0123456789"),
    )
    for app, offered in ((env.client, False), (client, True)):
        r = app.post(SESSION, json={"token": host_token(signing_keys, f"hand-{offered}")})
        assert r.status_code == 201, r.text
        assert r.json()["handoff"] is offered
        me = app.get("/api/v1/me", headers=bearer(r.json()["token"])).json()
        assert me["handoff"] is offered
